// What the two bare servers of the benchmark share (bench/ceiling.mjs and bench/reference.mjs): the
// least any correct create must do, with native JSON.parse and the same type and length checks as
// the service, so that both do the same work before storage. Nothing here comes from the service.

export const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' }

export const isText = (value, max) => typeof value === 'string' && value.length >= 1 && value.length <= max

/** Responds with JSON: a ready text as is, anything else through JSON.stringify; `headers` besides. */
export function respond(res, status, body, headers) {
  res.writeHead(status, headers === undefined ? JSON_TYPE : { ...JSON_TYPE, ...headers })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

/**
 * Reads a request body that must be a JSON object; a bad one gets a 400 here, an object is
 * handed to `accept` with the body's text.
 */
export function readObject(req, res, accept) {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8')
    let body
    try {
      body = JSON.parse(text)
    } catch {
      return respond(res, 400, { error: 40002, message: 'The request body is not valid JSON.' })
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return respond(res, 400, { error: 40003, message: 'The request body must be a JSON object.' })
    }
    accept(body, text)
  })
}

/**
 * Reads and checks a POST /plants body. A bad one gets a 400 here; a good one is handed to
 * `accept` as `{id, name, tag}` (tag undefined when absent) with the body's text, and responded to there.
 */
export function readPlant(req, res, accept) {
  readObject(req, res, (body, text) => {
    if (!Number.isInteger(body.id)) return respond(res, 400, { error: 40005, message: 'bad id' })
    if (!isText(body.name, 200)) return respond(res, 400, { error: 40006, message: 'bad name' })
    if (body.tag !== undefined && !isText(body.tag, 100)) {
      return respond(res, 400, { error: 40008, message: 'bad tag' })
    }
    accept({ id: body.id, name: body.name, tag: body.tag }, text)
  })
}
