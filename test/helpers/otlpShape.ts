// Checks an object against the OTLP/JSON encoding of ExportTraceServiceRequest (opentelemetry-proto,
// trace/v1 and common/v1, with the JSON mapping of the OTLP specification), and round-trips it
// through the SDK's own OTLP/JSON serializer.
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { OtlpAnyValue, OtlpKeyValue, OtlpTraceExport } from '../../lib/telemetry/OtlpJson';

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const NANOS_TEXT = /^\d+$/;
/** A fixed64 of nanoseconds: decimal digits, at most 2^64 - 1. */
const NANOS = { test: (text: string): boolean => NANOS_TEXT.test(text) && BigInt(text) <= 2n ** 64n - 1n };

/** Every way `value` departs from the OTLP/JSON shape, as paths and reasons; empty when it conforms. */
export function otlpShapeProblems(value: unknown): string[] {
  const problems: string[] = [];
  const bad = (path: string, why: string): void => void problems.push(`${path}: ${why}`);
  const req = value as OtlpTraceExport;
  if (!Array.isArray(req?.resourceSpans)) return ['resourceSpans: not an array'];
  req.resourceSpans.forEach((rs, i) => {
    const p = `resourceSpans[${i}]`;
    keyValues(rs.resource?.attributes, `${p}.resource.attributes`, bad);
    if (!Array.isArray(rs.scopeSpans)) return bad(`${p}.scopeSpans`, 'not an array');
    rs.scopeSpans.forEach((ss, j) => {
      const q = `${p}.scopeSpans[${j}]`;
      if (typeof ss.scope?.name !== 'string') bad(`${q}.scope.name`, 'not a string');
      ss.spans.forEach((s, k) => {
        const r = `${q}.spans[${k}]`;
        if (!HEX32.test(s.traceId) || /^0+$/.test(s.traceId))
          bad(`${r}.traceId`, `not 32 hex digits, non-zero: ${s.traceId}`);
        if (!HEX16.test(s.spanId) || /^0+$/.test(s.spanId))
          bad(`${r}.spanId`, `not 16 hex digits, non-zero: ${s.spanId}`);
        if (s.parentSpanId !== undefined && s.parentSpanId !== '' && !HEX16.test(s.parentSpanId))
          bad(`${r}.parentSpanId`, `not 16 hex digits: ${s.parentSpanId}`);
        if (typeof s.name !== 'string' || s.name === '') bad(`${r}.name`, 'empty');
        if (!Number.isInteger(s.kind) || s.kind < 0 || s.kind > 5)
          bad(`${r}.kind`, `not a SpanKind enum number: ${String(s.kind)}`);
        if (!NANOS.test(s.startTimeUnixNano)) bad(`${r}.startTimeUnixNano`, 'not a decimal string');
        if (!NANOS.test(s.endTimeUnixNano)) bad(`${r}.endTimeUnixNano`, 'not a decimal string');
        if (
          NANOS.test(s.startTimeUnixNano) &&
          NANOS.test(s.endTimeUnixNano) &&
          BigInt(s.endTimeUnixNano) < BigInt(s.startTimeUnixNano)
        )
          bad(r, 'ends before it starts');
        keyValues(s.attributes, `${r}.attributes`, bad);
        (s.events ?? []).forEach((e, m) => {
          if (!NANOS.test(e.timeUnixNano)) bad(`${r}.events[${m}].timeUnixNano`, 'not a decimal string');
          if (typeof e.name !== 'string') bad(`${r}.events[${m}].name`, 'not a string');
          keyValues(e.attributes, `${r}.events[${m}].attributes`, bad);
        });
        if (
          s.droppedEventsCount !== undefined &&
          !(Number.isSafeInteger(s.droppedEventsCount) && s.droppedEventsCount >= 0)
        )
          bad(`${r}.droppedEventsCount`, `not a count: ${String(s.droppedEventsCount)}`);
        if (s.status !== undefined && ![0, 1, 2].includes(s.status.code))
          bad(`${r}.status.code`, `not a StatusCode: ${String(s.status.code)}`);
      });
    });
  });
  return problems;
}

function keyValues(list: OtlpKeyValue[] | undefined, path: string, bad: (p: string, w: string) => void): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) return bad(path, 'not an array');
  const seen = new Set<string>();
  list.forEach((kv, i) => {
    if (typeof kv.key !== 'string' || kv.key === '') bad(`${path}[${i}].key`, 'empty');
    if (seen.has(kv.key)) bad(`${path}[${i}].key`, `duplicate key ${kv.key}`);
    seen.add(kv.key);
    anyValue(kv.value, `${path}[${i}].value`, bad);
  });
}

function anyValue(v: OtlpAnyValue, path: string, bad: (p: string, w: string) => void): void {
  const keys = Object.keys(v ?? {});
  if (keys.length !== 1) return bad(path, `AnyValue must set exactly one field, got ${keys.join(',') || 'none'}`);
  const o = v as Record<string, unknown>;
  if ('stringValue' in o && typeof o['stringValue'] !== 'string') bad(path, 'stringValue not a string');
  else if ('boolValue' in o && typeof o['boolValue'] !== 'boolean') bad(path, 'boolValue not a boolean');
  else if (
    'intValue' in o &&
    !(typeof o['intValue'] === 'string'
      ? /^-?\d+$/.test(o['intValue']) && BigInt(o['intValue']) >= -(2n ** 63n) && BigInt(o['intValue']) < 2n ** 63n
      : Number.isInteger(o['intValue']))
  )
    bad(path, 'intValue not a 64-bit integer');
  else if ('doubleValue' in o && !Number.isFinite(o['doubleValue'])) bad(path, 'doubleValue not a finite number');
  else if ('doubleValue' in o && typeof o['doubleValue'] !== 'number') bad(path, 'doubleValue not a number');
  else if ('arrayValue' in o)
    ((o['arrayValue'] as { values: OtlpAnyValue[] }).values ?? []).forEach((x, i) =>
      anyValue(x, `${path}.values[${i}]`, bad),
    );
  else if (
    !['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'].includes(
      keys[0]!,
    )
  )
    bad(path, `unknown AnyValue field ${keys[0]!}`);
}

function plain(v: OtlpAnyValue): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  return v.arrayValue.values.map(plain);
}

function hr(nanos: string): [number, number] {
  const n = BigInt(nanos);
  return [Number(n / 1_000_000_000n), Number(n % 1_000_000_000n)];
}

/**
 * Reads our OTLP/JSON back into the SDK's ReadableSpan and lets the SDK's own serializer
 * (@opentelemetry/otlp-transformer's JsonTraceSerializer) write it again: what comes out is
 * what the SDK would send a collector for the same spans.
 */
export function roundTrip(req: OtlpTraceExport): Record<string, unknown> {
  const spans: ReadableSpan[] = [];
  for (const rs of req.resourceSpans) {
    const resource = resourceFromAttributes(
      Object.fromEntries(rs.resource.attributes.map((kv) => [kv.key, plain(kv.value)])) as never,
    );
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        spans.push({
          name: s.name,
          kind: s.kind - 1, // the API's SpanKind starts at INTERNAL = 0; OTLP's at UNSPECIFIED = 0
          spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags: 1 }),
          parentSpanContext:
            s.parentSpanId === undefined ? undefined : { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: 1 },
          startTime: hr(s.startTimeUnixNano),
          endTime: hr(s.endTimeUnixNano),
          status: { code: s.status.code, ...(s.status.message === undefined ? {} : { message: s.status.message }) },
          attributes: Object.fromEntries(s.attributes.map((kv) => [kv.key, plain(kv.value)])) as never,
          links: [],
          events: s.events.map((e) => ({
            name: e.name,
            time: hr(e.timeUnixNano),
            attributes: Object.fromEntries(e.attributes.map((kv) => [kv.key, plain(kv.value)])) as never,
          })),
          duration: [0, 0],
          ended: true,
          resource,
          instrumentationScope: {
            name: ss.scope.name,
            ...(ss.scope.version === undefined ? {} : { version: ss.scope.version }),
          },
          droppedAttributesCount: 0,
          droppedEventsCount: s.droppedEventsCount ?? 0,
          droppedLinksCount: 0,
        } as ReadableSpan);
      }
    }
  }
  return JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans))) as Record<string, unknown>;
}
