import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { StateMachineError } from '../../lib/machine/StateMachineError';

describe('HistoryFileError', () => {
  it('names the file, the line and the start of the bad text as file:line', () => {
    const error = new HistoryFileError('corrupt_line', 'run.jsonl', 'corrupt line: not JSON', {
      line: 17,
      snippet: '{"seq":16,\n"from"',
    });
    expect(error).toBeInstanceOf(StateMachineError);
    expect(error.name).toBe('HistoryFileError');
    expect(error.code).toBe('corrupt_line');
    expect(error.file).toBe('run.jsonl');
    expect(error.line).toBe(17);
    expect(error.reason).toBe('corrupt line: not JSON');
    expect(error.message).toBe('run.jsonl:17: corrupt line: not JSON — "{\\"seq\\":16, \\"from\\""');
  });

  it('cuts a long snippet so the message stays one short line', () => {
    const error = new HistoryFileError('corrupt_line', 'f', 'bad', { line: 1, snippet: 'y'.repeat(500) });
    expect(error.message).toBe(`f:1: bad — "${'y'.repeat(57)}..."`);
  });

  it('keeps the cause and leaves out the line when there is none', () => {
    const cause = new Error('ENOENT');
    const error = new HistoryFileError('not_found', 'missing.jsonl', 'no such file', { cause });
    expect(error.message).toBe('missing.jsonl: no such file');
    expect(error.line).toBeUndefined();
    expect(error.cause).toBe(cause);
  });
});
