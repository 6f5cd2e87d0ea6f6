// The events route's part of the OpenAPI document: merged by the server's own builder, it must leave the
// document a valid OpenAPI 3.1 description (checked by a third-party validator) and describe the stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { EventBus } from '../../src/events/bus.js';
import { eventRoutes } from '../../src/rest/events.js';
import { EventsService } from '../../src/events/service.js';
import { buildOpenApi } from '../../src/rest/openapi.js';

test('GET /api/events is described in a valid OpenAPI 3.1 document', async () => {
  const doc = buildOpenApi([eventRoutes(new EventsService(new EventBus()))]) as Record<string, any>;
  const validator = new Validator();
  const res = await validator.validate(doc);
  assert.equal(res.valid, true, JSON.stringify(res.errors, null, 2));
  assert.equal(doc.openapi.startsWith('3.1'), true);
  const op = doc.paths['/api/events'].get;
  assert.ok(op.responses['200'].content['text/event-stream']);
  assert.ok(op.responses['401'] && op.responses['403'], 'the rights errors are listed');
  assert.deepEqual(op.parameters.map((p: { name: string }) => p.name).sort(), ['Last-Event-ID', 'last_event_id']);
});
