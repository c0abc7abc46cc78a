// A FileStore attempt followed as it grows (`StoredLines.read(n)` after the n lines read so far,
// as `agent-sm watch --store` polls): each read goes on from the byte the last one ended at, and
// still gives exactly the whole lines after n when a line is half written, when the file was
// replaced by a new attempt of the same name (a resume set the old one aside), or cut shorter.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch } from '../../lib/index';
import { FileStore } from '../../lib/subpaths/batch';
import { base, task } from '../helpers/storeTasks';

async function text(lines: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of lines) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

let root: string;
beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-follow-'))));
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('FileStore: a follower reads each attempt after the lines it has', () => {
  it('gives the whole lines after n as the file grows, is replaced and is cut, whatever the last read was', async () => {
    const store = new FileStore(root);
    await runBatch([task('a')], { ...base(), store, batchId: 'b' });
    const file = path.join(root, 'b', 'a.jsonl');
    const whole = fs.readFileSync(file, 'utf8');
    const run = (await store.readBatch('b'))!.runs[0]!.run;
    const lines = whole.split(/(?<=\n)/);

    // Read as a follower does: after what it has, each time.
    let have = 0;
    const follow = async (): Promise<string> => {
      const got = await text(run.read(have));
      have += got.split(/(?<=\n)/).filter((l) => l !== '').length;
      return got;
    };
    expect(await follow()).toBe(whole);
    expect(await follow()).toBe('');
    // Half a line: left for the next read; then its rest and one more line.
    fs.appendFileSync(file, '{"half":');
    expect(await follow()).toBe('');
    fs.appendFileSync(file, '1}\n{"next":2}\n');
    expect(await follow()).toBe('{"half":1}\n{"next":2}\n');
    expect(have).toBe(lines.length + 2);
    // A read further on than the file goes is empty, and a read from before starts again.
    expect(await text(run.read(have + 3))).toBe('');
    expect(await text(run.read(1))).toBe([...lines.slice(1), '{"half":1}\n', '{"next":2}\n'].join(''));

    // Replaced by a new file of the same name (a new inode), shorter than where the last read ended.
    fs.renameSync(file, `${file}.interrupted`);
    fs.writeFileSync(file, '{"new":1}\n{"new":2}\n');
    expect(await text(run.read(1))).toBe('{"new":2}\n');
    expect(await text(run.read(2))).toBe('');
    // Cut shorter in place (the same inode): read again from its start.
    fs.truncateSync(file, '{"new":1}\n'.length);
    expect(await text(run.read(0))).toBe('{"new":1}\n');
    fs.appendFileSync(file, '{"new":3}\n');
    expect(await text(run.read(1))).toBe('{"new":3}\n');
  });
});
