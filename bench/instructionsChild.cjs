// Run by bench/instructions.ts under valgrind: loads one candidate bundle, warms it up,
// then runs N more cycles. The difference of two runs' instruction counts, divided by the
// moves made, is the candidate's instructions per move. Plain CommonJS: no tsx under valgrind.
const [file, clock, variant, warmup, cycles] = process.argv.slice(2);
const runner = require(file).create(clock, variant === '-' ? undefined : variant);
for (let i = 0; i < Number(warmup); i++) runner.cycle();
for (let i = 0; i < Number(cycles); i++) runner.cycle();
if (runner.state() !== 'WaitingForUserInput') throw new Error(`ended in ${runner.state()}`);
