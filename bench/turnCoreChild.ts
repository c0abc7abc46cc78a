// One side of the turncore suite's instruction count (bench/turnCoreInstructions.ts), run under
// callgrind: loads a turn core bundle, makes `warmup` adapter turns or mirrored runs
// uninstrumented, switches callgrind's instrumentation on, then makes `extra` more.
//   node turnCoreChild.cjs <core.cjs> <adapter|mirror> <warmup> <extra>
import { countFromHere } from './callgrind';
import { loadTurnCore, side } from './turnCoreSides';

async function main(): Promise<void> {
  const [file, key, warmup, extra] = process.argv.slice(2);
  const [w, x] = [Number(warmup), Number(extra)];
  if (file === undefined || (key !== 'adapter' && key !== 'mirror') || !Number.isInteger(w) || !Number.isInteger(x))
    throw new Error(
      `usage: turnCoreChild <core.cjs> <adapter|mirror> <warmup> <extra>, got ${process.argv.slice(2).join(' ')}`,
    );
  const s = side(loadTurnCore(file));
  const once = key === 'adapter' ? s.adapterTurn : s.mirrorRun;
  for (let i = 0; i < w; i++) await once();
  await countFromHere();
  for (let i = 0; i < x; i++) await once();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
