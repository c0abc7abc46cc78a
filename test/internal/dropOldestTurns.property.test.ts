import fc from 'fast-check';
import { dropOldestTurns } from '../../lib/internal/dropOldestTurns';

// Conversations in the Chat Completions shape: a system prompt, then turns of a user message,
// assistant tool calls each followed by their tool results, and a closing assistant text.
type Message = { role: 'system' | 'user' | 'assistant' | 'tool'; calls?: string[]; answers?: string };

const turnArb = fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 3 });

function conversation(turns: number[][]): Message[] {
  let id = 0;
  const out: Message[] = [{ role: 'system' }];
  for (const rounds of turns) {
    out.push({ role: 'user' });
    for (const n of rounds) {
      const calls = Array.from({ length: n }, () => `c${++id}`);
      out.push({ role: 'assistant', calls });
      for (const c of calls) out.push({ role: 'tool', answers: c });
    }
    out.push({ role: 'assistant' });
  }
  return out;
}

/** Every tool result follows the assistant message that asked for it, and every call is answered. */
function paired(messages: Message[]): boolean {
  const open = new Set<string>();
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!open.delete(m.answers!)) return false;
    } else {
      if (open.size > 0) return false;
      for (const c of m.calls ?? []) open.add(c);
    }
  }
  return open.size === 0;
}

describe('dropOldestTurns()', () => {
  it('keeps the system prompt and the last `keep` turns, drops at least one earlier turn when there is one, and never parts a tool call from its result', () => {
    fc.assert(
      fc.property(fc.array(turnArb, { maxLength: 6 }), fc.constantFrom(0, 1), (turns, keep) => {
        const messages = conversation(turns);
        const { messages: kept, removed } = dropOldestTurns(messages, (m) => m.role === 'user', keep);
        expect(kept.length + removed).toBe(messages.length);
        expect(kept[0]).toEqual({ role: 'system' });
        expect(paired(kept)).toBe(true);
        const users = (ms: Message[]): number => ms.filter((m) => m.role === 'user').length;
        if (turns.length > keep) expect(users(kept)).toBeLessThan(users(messages));
        else expect(removed).toBe(0);
        expect(users(kept)).toBeGreaterThanOrEqual(Math.min(keep, turns.length));
        // What is kept is the end of the conversation.
        expect(messages.slice(messages.length - (kept.length - 1))).toEqual(kept.slice(1));
      }),
    );
  });
});
