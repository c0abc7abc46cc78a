import { formatDuration as formatDurationWords } from 'date-fns/formatDuration';
import { intervalToDuration } from 'date-fns/intervalToDuration';

/**
 * A duration for people: `0 ms`, `350 ms`, `2.4 s`, `3 minutes 5 seconds`, `1 hour 2 minutes`.
 * Sub-minute durations keep their precision; longer ones are said in words by date-fns.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms < 1) return ms === 0 ? '0 ms' : `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const duration = intervalToDuration({ start: 0, end: Math.round(ms / 1000) * 1000 });
  return formatDurationWords(duration, { format: ['days', 'hours', 'minutes', 'seconds'] });
}
