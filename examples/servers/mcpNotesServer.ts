/**
 * A small MCP server for `npm run example:mcp`, built with the SDK's own `McpServer` and run by
 * the example as a child process over stdio. It keeps a few notes in memory and offers:
 *
 * - `notes.list`, `notes.read`: plain text results;
 * - `notes.stats`: structured content (with an output schema);
 * - `notes.reindex`: slow; it logs when it starts and when the client cancels it;
 * - `notes.enable_archive`: adds the tool `archive.search`, so the client gets
 *   `notifications/tools/list_changed`.
 *
 * Log messages (`notifications/message`) tell the client what the server did.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const notes: Record<string, string> = {
  groceries: 'milk, eggs, coffee beans',
  ideas: 'a state machine for every agent loop',
  todo: 'renew the passport; call the plumber',
};
const archive: Record<string, string> = { '2025-trip': 'Oslo in June: book the ferry early' };

const server = new McpServer({ name: 'notes', version: '1.0.0' }, { capabilities: { logging: {} } });
const log = (data: string): Promise<void> => server.sendLoggingMessage({ level: 'info', logger: 'notes', data });

server.registerTool('notes.list', { description: 'Lists the names of the notes' }, async () => ({
  content: [{ type: 'text', text: Object.keys(notes).join('\n') }],
}));

server.registerTool(
  'notes.read',
  { description: 'Reads one note', inputSchema: { name: z.string().describe('the note, as notes.list names it') } },
  async ({ name }) =>
    notes[name] === undefined
      ? { content: [{ type: 'text', text: `no note named ${name}` }], isError: true }
      : { content: [{ type: 'text', text: notes[name] }] },
);

server.registerTool(
  'notes.stats',
  { description: 'Counts the notes and their words', outputSchema: { notes: z.number(), words: z.number() } },
  async () => {
    const structuredContent = {
      notes: Object.keys(notes).length,
      words: Object.values(notes).join(' ').split(/\s+/).length,
    };
    return { content: [{ type: 'text', text: `${structuredContent.notes} notes` }], structuredContent };
  },
);

// Takes a minute, unless the client cancels it: its signal aborts when notifications/cancelled arrives.
server.registerTool('notes.reindex', { description: 'Rebuilds the search index (slow)' }, async (extra) => {
  await log(`reindex started (request ${extra.requestId})`);
  const finished = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(true), 60_000);
    extra.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!finished)
    await log(`reindex cancelled by the client (request ${extra.requestId}): ${String(extra.signal.reason)}`);
  return { content: [{ type: 'text', text: finished ? 'index rebuilt' : 'cancelled' }] };
});

server.registerTool('notes.enable_archive', { description: 'Makes the archived notes searchable' }, async () => {
  // Registering a tool makes McpServer send notifications/tools/list_changed.
  server.registerTool(
    'archive.search',
    { description: 'Searches the archived notes', inputSchema: { query: z.string() } },
    async ({ query }) => ({
      content: [
        {
          type: 'text',
          text:
            Object.entries(archive)
              .flatMap(([name, text]) =>
                `${name} ${text}`.toLowerCase().includes(query.toLowerCase()) ? [`${name}: ${text}`] : [],
              )
              .join('\n') || 'nothing found',
        },
      ],
    }),
  );
  return { content: [{ type: 'text', text: 'the archive is searchable now (tool archive.search)' }] };
});

void server.connect(new StdioServerTransport());
