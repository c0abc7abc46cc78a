import { AgentWithStateMachine, createScriptedAgent, type ToolCall } from '../../lib/index';
import { captureLogger } from '../helpers/captureLogger';

const call: ToolCall = { id: 'c1', name: 'slow' };

function plainLogger(): {
  logger: {
    error: (m: string) => void;
    warn: (m: string) => void;
    info: (m: string) => void;
    debug: (m: string) => void;
  };
  lines: string[];
} {
  const lines: string[] = [];
  const at =
    (level: string) =>
    (m: string): void =>
      void lines.push(`${level}: ${m}`);
  return { logger: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') }, lines };
}

describe('AgentWithStateMachine logger', () => {
  it('takes any object with error, warn, info and debug, as pino or console', async () => {
    const { logger, lines } = plainLogger();
    const adapter = new AgentWithStateMachine(
      createScriptedAgent({ replies: [{ error: 'overloaded' }, { text: 'ok' }] }),
      { logger, sleep: async () => undefined, random: () => 0.5 },
    );
    expect((await adapter.runTurn('go')).text).toBe('ok');
    expect(lines).toContain('warn: sendUserMessage attempt 1 failed (overloaded); retrying in 375 ms');
    expect(lines.some((l) => l.startsWith('debug: transition Ready → WaitingForUserInput'))).toBe(true);
    expect(
      () => new AgentWithStateMachine(createScriptedAgent({ replies: [] }), { logger: { warn() {} } as never }),
    ).toThrow('Expected `logger` to be an object with error, warn, info and debug methods');
  });

  it('a logger whose every method throws never changes an outcome: a retryable failure is still retried', async () => {
    const boom = (): never => {
      throw new Error('transport down');
    };
    const warning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const adapter = new AgentWithStateMachine(
        createScriptedAgent({ replies: [{ error: '529 overloaded' }, { text: 'ok' }] }),
        {
          logger: { error: boom, warn: boom, info: boom, debug: boom },
          sleep: async () => undefined,
        },
      );
      const result = await adapter.runTurn('go');
      expect(result.outcome).toBe('end_of_turn');
      expect(result.text).toBe('ok');
    } finally {
      warning.mockRestore();
    }
  });

  it('follows a level change on a winston logger, whose level the machine reads on every move', async () => {
    const { logger, entries } = captureLogger('warn');
    const adapter = new AgentWithStateMachine(createScriptedAgent({ replies: [{ text: 'one' }, { text: 'two' }] }), {
      logger,
      sleep: async () => undefined,
    });
    await adapter.runTurn('first');
    expect(entries.filter((e) => e.message.startsWith('transition '))).toEqual([]);
    logger.level = 'debug';
    await adapter.runTurn('second');
    expect(entries.filter((e) => e.message.startsWith('transition ')).map((e) => e.level)).toEqual([
      'debug',
      'debug',
      'debug',
      'debug',
    ]);
  });

  it("reads a level that cannot change (the default logger's kind) once, not on every move", async () => {
    const { logger, entries } = captureLogger('warn');
    Object.defineProperty(logger, 'level', { value: 'warn', writable: false, configurable: false, enumerable: true });
    let reads = 0;
    const counted = new Proxy(logger, {
      get(target, key, receiver) {
        if (key === 'level') reads += 1;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const adapter = new AgentWithStateMachine(
      createScriptedAgent({ replies: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] }),
      { logger: counted, sleep: async () => undefined },
    );
    await adapter.runTurn('first');
    const afterFirst = reads;
    await adapter.runTurn('second');
    await adapter.runTurn('third');
    expect(reads).toBe(afterFirst);
    expect(adapter.machine.history().length).toBeGreaterThan(6);
    expect(entries.filter((e) => e.message.startsWith('transition '))).toEqual([]);
  });

  it('follows a level change on a winston-like logger that keeps its level behind a getter', async () => {
    class GetterLogger {
      readonly lines: string[] = [];
      #level = 'warn';
      get level(): string {
        return this.#level;
      }
      set level(level: string) {
        this.#level = level;
      }
      isLevelEnabled(level: string): boolean {
        return this.#level === 'debug' || level !== 'debug';
      }
      log(level: string, message: string): this {
        if (this.isLevelEnabled(level)) this.lines.push(`${level}: ${message}`);
        return this;
      }
      error(m: string): this {
        return this.log('error', m);
      }
      warn(m: string): this {
        return this.log('warn', m);
      }
      info(m: string): this {
        return this.log('info', m);
      }
      debug(m: string): this {
        return this.log('debug', m);
      }
    }
    const logger = new GetterLogger();
    const adapter = new AgentWithStateMachine(createScriptedAgent({ replies: [{ text: 'one' }, { text: 'two' }] }), {
      logger,
      sleep: async () => undefined,
    });
    await adapter.runTurn('first');
    expect(logger.lines.filter((l) => l.includes('transition '))).toEqual([]);
    logger.level = 'debug';
    await adapter.runTurn('second');
    expect(logger.lines.filter((l) => l.includes('transition '))).toHaveLength(4);
  });

  it('an ordinary cancel logs at info; a fault forced to Error stays a warning', async () => {
    const { logger, entries } = captureLogger('debug');
    const adapter: AgentWithStateMachine = new AgentWithStateMachine(
      createScriptedAgent({
        sleep: async () => undefined,
        replies: [{ toolCalls: [call] }, { toolCalls: [call] }],
        tools: { slow: () => (adapter.cancel('user pressed Esc'), 'done') },
        commits: [[], []],
      }),
      { logger, sleep: async () => undefined },
    );
    await adapter.runTurn('go');
    const cancel = entries.filter((e) => e.message.includes('Cancelled'));
    expect(cancel.length).toBeGreaterThan(0);
    expect(cancel.every((e) => e.level !== 'warn')).toBe(true);
    expect(entries.find((e) => e.message.startsWith('forced transition RunningTool → Cancelled'))!.level).toBe('info');

    // A broken contract in CheckingGitCommits is forced to Error: a fault, so a warning.
    const faulty = captureLogger('debug');
    const broken = new AgentWithStateMachine(
      {
        ...createScriptedAgent({ replies: [{ toolCalls: [{ id: 'c1', name: 'x' }] }], tools: { x: { output: 'ok' } } }),
        checkGitCommits: async () => 'abc' as never,
      },
      { logger: faulty.logger, sleep: async () => undefined },
    );
    await broken.runTurn('go');
    expect(
      faulty.entries.find((e) => e.message.startsWith('forced transition CheckingGitCommits → Error'))!.level,
    ).toBe('warn');
  });
});
