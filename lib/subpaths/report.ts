/**
 * A run or a batch shown to people and tools: the self-contained HTML pages of
 * `agent-sm report`, Mermaid diagrams of the table and of a run (the edges it took, or its
 * timeline), and a run as OpenTelemetry spans in OTLP/JSON (`agent-sm export otlp`).
 *
 * @module agent-state-machine/report
 */
export { renderRunPage } from '../report/renderRunPage';
export type { RunPageOptions } from '../report/renderRunPage';
export { renderBatchPage } from '../report/renderBatchPage';
export type { BatchPageRun, BatchPageOptions } from '../report/renderBatchPage';
export { buildHtmlReport, buildStoreBatchReport } from '../report/buildHtmlReport';
export type { BuildHtmlReportOptions, HtmlReport } from '../report/buildHtmlReport';

export { toMermaid, historyToMermaid, historyToGantt } from '../history/toMermaid';
export type { HistoryDiagramOptions, GanttOptions } from '../history/toMermaid';

export { historyToOtlp } from '../telemetry/historyToOtlp';
export type { HistoryToOtlpOptions } from '../telemetry/historyToOtlp';
export type { OtlpTraceExport, OtlpResourceSpans, OtlpSpan, OtlpKeyValue, OtlpAnyValue } from '../telemetry/OtlpJson';
