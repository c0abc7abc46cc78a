/** A trailing date snapshot of a model id: `-2025-04-14` or `-20250414`. */
const DATED = /-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;

/**
 * Pure: the base model id of a dated snapshot (`gpt-4.1-2025-04-14` → `gpt-4.1`,
 * `claude-3-5-haiku-20241022` → `claude-3-5-haiku`), or undefined when `model` names no date.
 * Providers answer under the dated id of the model asked for by its base id, so that a price
 * table keyed by the base id still prices the response.
 */
export function undatedModelId(model: string): string | undefined {
  const base = model.replace(DATED, '');
  return base === model || base === '' ? undefined : base;
}
