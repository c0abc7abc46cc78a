import winston from 'winston';
import type * as DefaultLoggerModule from '../../lib/machine/defaultLogger';

type Module = typeof DefaultLoggerModule;

/** Loads a fresh copy of the module so each test sees its own environment. */
function freshModule(level: string | undefined): Module {
  const saved = process.env.AGENT_SM_LOG_LEVEL;
  if (level === undefined) delete process.env.AGENT_SM_LOG_LEVEL;
  else process.env.AGENT_SM_LOG_LEVEL = level;
  try {
    let mod: Module | undefined;
    jest.isolateModules(() => {
      mod = jest.requireActual<Module>('../../lib/machine/defaultLogger');
    });
    return mod!;
  } finally {
    if (saved === undefined) delete process.env.AGENT_SM_LOG_LEVEL;
    else process.env.AGENT_SM_LOG_LEVEL = saved;
  }
}

describe('getDefaultLogger()', () => {
  it('holds its level read-only: it is fixed for the process, so machines read it once', () => {
    const mod = freshModule(undefined);
    process.env.AGENT_SM_LOG_LEVEL = 'info';
    let logger: winston.Logger;
    try {
      logger = mod.getDefaultLogger();
    } finally {
      delete process.env.AGENT_SM_LOG_LEVEL;
    }
    expect(() => {
      (logger as { level: string }).level = 'debug';
    }).toThrow(TypeError);
    expect(logger.level).toBe('info');
    expect([logger.isLevelEnabled('info'), logger.isLevelEnabled('debug')]).toEqual([true, false]);
  });

  it('logs at warn to stderr when AGENT_SM_LOG_LEVEL is unset', () => {
    const logger = freshModule(undefined).getDefaultLogger();
    expect(logger.level).toBe('warn');
    const transport = logger.transports[0] as winston.transports.ConsoleTransportInstance & {
      stderrLevels: Record<string, boolean>;
    };
    expect(Object.keys(transport.stderrLevels)).toEqual(Object.keys(winston.config.npm.levels));
  });

  it('takes its level from AGENT_SM_LOG_LEVEL, once per process', () => {
    const mod = freshModule(undefined);
    process.env.AGENT_SM_LOG_LEVEL = 'debug';
    try {
      const logger = mod.getDefaultLogger();
      expect(logger.level).toBe('debug');
      expect(mod.getDefaultLogger()).toBe(logger);
    } finally {
      delete process.env.AGENT_SM_LOG_LEVEL;
    }
  });

  it('warns once, naming a level it does not know, and falls back to warn', () => {
    const mod = freshModule(undefined);
    process.env.AGENT_SM_LOG_LEVEL = 'bogus';
    // winston's Console transport writes to console._stderr when there is one (as under jest), else to console.error.
    const stderr = (console as unknown as { _stderr?: NodeJS.WriteStream })._stderr ?? process.stderr;
    const written = jest.spyOn(stderr, 'write').mockImplementation(() => true);
    const logged = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const logger = mod.getDefaultLogger();
      expect(mod.getDefaultLogger()).toBe(logger);
      expect(logger.level).toBe('warn');
      const output = [...written.mock.calls, ...logged.mock.calls, ...errors.mock.calls]
        .map((c) => String(c[0]))
        .join('');
      const warnings = output.split(
        'Expected `AGENT_SM_LOG_LEVEL` to be one of error, warn, info, http, verbose, debug, silly, got `bogus` (string); logging at warn',
      );
      expect(warnings).toHaveLength(2);
    } finally {
      written.mockRestore();
      logged.mockRestore();
      errors.mockRestore();
      delete process.env.AGENT_SM_LOG_LEVEL;
    }
  });
});
