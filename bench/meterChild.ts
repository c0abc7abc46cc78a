// Run by bench/meterInstructions.ts under valgrind, bundled to one CommonJS file: makes `warmup`
// observed calls of one side of the `meter` bench, then `extra` more. The difference of two
// runs' instruction counts over `extra` is that side's instructions per answer.
//
//   node .bench-tmp/meter/meterChild.cjs <hand|metered> <json|streamed> <warmup> <extra>
import { meterSides } from './meterSides';

async function main(): Promise<void> {
  const [side, kind, warmup, extra] = process.argv.slice(2);
  if ((side !== 'hand' && side !== 'metered') || (kind !== 'json' && kind !== 'streamed'))
    throw new Error(`usage: meterChild <hand|metered> <json|streamed> <warmup> <extra>, got ${side} ${kind}`);
  const sides = await meterSides();
  try {
    const once = sides.once(side, kind);
    const runs = Number(warmup) + Number(extra);
    for (let i = 0; i < runs; i++) await once();
  } finally {
    await sides.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
