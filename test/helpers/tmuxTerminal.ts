// A real terminal for tests that look at what a command draws: a tmux server on a socket of
// its own. Each terminal gets a socket no earlier one used: `kill-server` returns before the
// server has let go of its socket, and a new session on the same socket then fails now and
// again with "server exited unexpectedly" (60 of 300 tries on this machine; 0 of 300 with a
// socket each).
import { execFileSync } from 'node:child_process';

let opened = 0;

export interface TmuxTerminal {
  /** Runs `tmux <args>` against this terminal's server; returns what it prints. */
  tmux(...args: string[]): string;
  /** The screen of window `w`, as text. */
  screen(): string;
  /** Ends the server; a server already gone is fine. */
  close(): void;
}

/** Starts session `w`, `cols` × `rows`, running `command`, on a server of its own. */
export function openTmuxTerminal(name: string, cols: number, rows: number, command: string): TmuxTerminal {
  const socket = `agent-sm-${name}-${process.pid}-${Date.now()}-${++opened}`;
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  tmux('new-session', '-d', '-s', 'w', '-x', String(cols), '-y', String(rows), command);
  return {
    tmux,
    screen: () => tmux('capture-pane', '-p', '-t', 'w'),
    close: () => {
      try {
        tmux('kill-server');
      } catch {
        // no server left
      }
    },
  };
}
