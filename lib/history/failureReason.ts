/**
 * Why a run failed, in words, from the move into its error state: the move's description and
 * the error its data carries (`error`, `message` or `reason`, a string or an object with a
 * `message`), when the description does not already say it. Every reader that names a failure
 * (`watch`, `inspect <folder>`, a resumed batch's report) says it the same way. Pure.
 */
export function failureReason(description: string, data: unknown): string {
  const error = errorOf(data);
  return error === undefined || description.includes(error) ? description : `${description}: ${error}`;
}

function errorOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const d = data as Record<string, unknown>;
  for (const key of ['error', 'message', 'reason']) {
    const v = d[key];
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'object' && v !== null && typeof (v as { message?: unknown }).message === 'string')
      return (v as { message: string }).message;
  }
  return undefined;
}
