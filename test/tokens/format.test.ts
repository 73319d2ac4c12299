import { describe, expect, it } from 'vitest'
import { redactTokens } from '../../src/redact.js'
import { hideSecrets } from '../../src/tokens/format.js'

const JWT =
  'eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhbGljZSIsImV4cCI6MTl9.MEUCIQDx-2vL_Yq8t3m0c1ZpA9yQ'

describe('hideSecrets on a JWT', () => {
  it.each([
    [`GET /plants/${JWT}`, 'GET /plants/[redacted]'],
    [`"authorization":"Bearer ${JWT}"`, '"authorization":"Bearer [redacted]"'],
    // alg none: no signature after the last dot.
    ['eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.', '[redacted]'],
    // Dots percent-encoded in a URL, in either case; a header written with a space (`{ "`).
    [`/x/${JWT.replaceAll('.', '%2E')}/y`, '/x/[redacted]/y'],
    [`/x/${JWT.replaceAll('.', '%2e')}`, '/x/[redacted]'],
    ['eyAiYWxnIjogIlJTMjU2In0.eyJ9.c2ln', '[redacted]'],
  ])('replaces it whole: %s', (text, shown) => {
    expect(hideSecrets(text)).toBe(shown)
  })

  it('leaves dotted words and file names alone', () => {
    for (const text of ['eyes.png.x', 'keyed.value.here', 'survey.2024.csv', 'v1.2.3']) {
      expect(hideSecrets(text)).toBe(text)
    }
  })

  it('hides one in a query parameter of any name, as the log line shows it', () => {
    expect(redactTokens(`/plants?access_token=${JWT}&tag=fern&q=${JWT}`)).toBe(
      '/plants?access_token=[redacted]&tag=fern&q=[redacted]',
    )
  })
})
