/**
 * The OTLP/JSON shape of a trace export (`ExportTraceServiceRequest`), as the OTLP
 * specification encodes protobuf in JSON: ids as hex strings, 64-bit integers and nanosecond
 * times as decimal strings, enums as numbers, attribute values as `AnyValue` objects.
 */
export interface OtlpTraceExport {
  resourceSpans: OtlpResourceSpans[];
}

/** The spans of one resource (one service). */
export interface OtlpResourceSpans {
  resource: { attributes: OtlpKeyValue[] };
  scopeSpans: Array<{ scope: { name: string; version?: string }; spans: OtlpSpan[] }>;
}

/** One span: a turn, an LLM call or a tool call. */
export interface OtlpSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 INTERNAL, 2 SERVER, 3 CLIENT, 4 PRODUCER, 5 CONSUMER. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpKeyValue[];
  events: Array<{ timeUnixNano: string; name: string; attributes: OtlpKeyValue[] }>;
  /** Events left out because the span held the most it keeps. */
  droppedEventsCount?: number;
  /** `code`: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
}

/** One attribute. */
export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

/** An attribute value. */
export type OtlpAnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: OtlpAnyValue[] } };

/** OTLP span kinds. */
export const SPAN_KIND = { internal: 1, client: 3 } as const;

/** OTLP status codes. */
export const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;
