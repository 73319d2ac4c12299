import { describe, expect, it } from 'vitest'
import { plantEvent } from '../../src/plants/events.js'
import { CHANGE_TYPES, changeOfRow, payloadData } from '../../src/store/change-row.js'

const time = new Date('2026-01-02T03:04:05.678Z')
const big = { id: 9223372036854775807n, name: 'a "quoted" \\"data\\": name', tag: 't' }
const bigJson = '{"id":9223372036854775807,"name":"a \\"quoted\\" \\\\\\"data\\\\\\": name","tag":"t"}'

describe('a stored change row', () => {
  it("takes the event's data as written, ids exact, whatever the plant's name holds", () => {
    expect(payloadData(plantEvent('plant.created', big, time).payload)).toBe(bigJson)
    // Another form of payload shows no plant.
    expect(payloadData('{}')).toBeNull()
    expect(payloadData('{"data":')).toBeNull()
  })

  it('shows a create, an update and a delete with the plant before and after, and the actor parsed', () => {
    const row = (type: 'plant.created' | 'plant.updated' | 'plant.deleted', before: string | null) => ({
      seq: 7,
      type,
      created_at: time,
      payload: plantEvent(type, big, time).payload,
      actor: '{"iss":"https://issuer.example/","sub":"u"}',
      request_id: 'req-1',
      before,
    })
    const common = {
      seq: 7,
      time,
      actor: { iss: 'https://issuer.example/', sub: 'u' },
      requestId: 'req-1',
    }
    expect(changeOfRow(row('plant.created', null))).toEqual({
      ...common,
      type: 'plant.created',
      before: null,
      after: bigJson,
    })
    expect(changeOfRow(row('plant.updated', '{"id":1,"name":"old"}'))).toEqual({
      ...common,
      type: 'plant.updated',
      before: '{"id":1,"name":"old"}',
      after: bigJson,
    })
    expect(changeOfRow(row('plant.deleted', null))).toEqual({
      ...common,
      type: 'plant.deleted',
      before: bigJson,
      after: null,
    })
    // Stored before changes recorded their actor.
    expect(changeOfRow({ ...row('plant.created', null), actor: null, request_id: null })).toMatchObject({
      actor: null,
      requestId: null,
    })
  })

  it("holds a plant's three change types, and no webhook test message", () => {
    expect(CHANGE_TYPES).toEqual(['plant.created', 'plant.updated', 'plant.deleted'])
  })
})
