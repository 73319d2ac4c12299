import { readFileSync } from 'node:fs'
import { validate } from 'dockerfile-utils'
import { describe, expect, it } from 'vitest'
import { root } from './podman.js'

const FILES = [
  'Dockerfile',
  'test/deploy/stand-ins/node/Containerfile',
  'test/deploy/stand-ins/postgres/Containerfile',
  'test/deploy/stand-ins/haproxy/Containerfile',
  'test/deploy/systemd-host/Containerfile',
]

/** dockerfile-utils' findings, errors and warnings alike, as `line: message`. */
const findings = (text: string) =>
  validate(text).map((diagnostic) => `${diagnostic.range.start.line + 1}: ${diagnostic.message}`)

describe('Dockerfile lint (dockerfile-utils)', () => {
  it.each(FILES)('%s has no finding', (file) => {
    expect(findings(readFileSync(`${root}${file}`, 'utf8'))).toEqual([])
  })

  it('finds what it is there to find', () => {
    const bad = 'FROM debian\nmaintainer someone\nEXPOSE http\nWORKDIR data\nCMD ["a"]\nCMD ["b"]\n'
    expect(findings(bad).sort()).toEqual([
      '2: Instructions should be written in uppercase letters',
      '2: MAINTAINER has been deprecated',
      '3: Invalid containerPort: http',
      '4: WORKDIR paths should be absolute',
      '5: There can only be one CMD instruction in a Dockerfile or build stage. Only the last one will have an effect.',
    ])
  })
})
