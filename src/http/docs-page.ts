/**
 * A Swagger UI plugin for the /docs page, served from this service beside Swagger UI itself. Swagger
 * UI shows a JSON response by parsing it into JavaScript numbers and writing it back, which rounds
 * every id past 2^53 (9007199254740993 shows as 9007199254740992). This plugin shows the response
 * text as the service sent it, indented without parsing a number: the ids digit for digit. The page
 * runs it as a file of its own origin, as its Content-Security-Policy allows (no inline script).
 *
 * It is loaded after Swagger UI's bundle and before the page's initializer runs (on load), and adds
 * itself to the plugins that initializer passes to SwaggerUIBundle.
 */
export const LOSSLESS_RESPONSES_JS = `'use strict';
(function () {
  /** The JSON text indented as JSON.stringify(value, null, 2) would, its numbers left as written. */
  function indent(text) {
    var out = '';
    var depth = 0;
    var i = 0;
    var pad = function (n) { return '\\n' + '  '.repeat(n); };
    while (i < text.length) {
      var c = text[i];
      if (c === '"') {
        var end = i + 1;
        while (text[end] !== '"') end += text[end] === '\\\\' ? 2 : 1;
        out += text.slice(i, end + 1);
        i = end + 1;
        continue;
      }
      if (c === '{' || c === '[') {
        var close = c === '{' ? '}' : ']';
        var next = i + 1;
        while (/\\s/.test(text[next] || '')) next++;
        if (text[next] === close) {
          out += c + close;
          i = next + 1;
          continue;
        }
        depth++;
        out += c + pad(depth);
      } else if (c === '}' || c === ']') {
        depth--;
        out += pad(depth) + c;
      } else if (c === ',') {
        out += ',' + pad(depth);
      } else if (c === ':') {
        out += ': ';
      } else if (!/\\s/.test(c)) {
        out += c;
      }
      i++;
    }
    return out;
  }

  function LosslessJsonResponses(system) {
    var React = system.React;
    return {
      wrapComponents: {
        responseBody: function (Original) {
          return function LosslessResponseBody(props) {
            var content = props.content;
            if (typeof content !== 'string' || !/json/i.test(props.contentType || '')) {
              return React.createElement(Original, props);
            }
            var shown;
            try {
              // Parsed only to know the text is JSON; what is shown is the text itself.
              JSON.parse(content);
              shown = indent(content);
            } catch (error) {
              shown = content;
            }
            var HighlightCode = props.getComponent('HighlightCode', true);
            return React.createElement(
              'div',
              null,
              React.createElement('h5', null, 'Response body'),
              React.createElement(
                HighlightCode,
                { language: 'json', downloadable: true, fileName: 'response_' + Date.now() + '.json', canCopy: true },
                shown,
              ),
            );
          };
        },
      },
    };
  }

  var bundle = window.SwaggerUIBundle;
  function withLosslessResponses(config) {
    var plugins = (config && config.plugins) || [];
    return bundle(Object.assign({}, config, { plugins: plugins.concat([LosslessJsonResponses]) }));
  }
  Object.assign(withLosslessResponses, bundle);
  window.SwaggerUIBundle = withLosslessResponses;
})();
`
