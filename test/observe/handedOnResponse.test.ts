import { handedOnResponse } from '../../lib/observe/handedOnResponse';

// Errors of a used body come from Node's realm, not the test's: matched by name.
// The metered fetch hands a whole answer on as this `Response`: whatever an SDK reads from it
// must read as the answer it came from, once.
const BODY = JSON.stringify({ id: 'chatcmpl-1', choices: [{ message: { content: 'héllo' } }] });
const make = (): Response =>
  handedOnResponse(BODY, {
    status: 201,
    statusText: 'Created',
    headers: { 'content-type': 'application/json', 'x-request-id': 'req_1' },
  });

describe('handedOnResponse', () => {
  it('is a Response with the answer’s status and headers', () => {
    const response = make();
    expect(response).toBeInstanceOf(Response);
    expect([response.status, response.statusText, response.ok]).toEqual([201, 'Created', true]);
    expect(response.headers.get('x-request-id')).toBe('req_1');
    expect(response.bodyUsed).toBe(false);
  });

  it('reads as text or as JSON once, and a second read throws as a used body does', async () => {
    const text = make();
    expect(await text.text()).toBe(BODY);
    expect(text.bodyUsed).toBe(true);
    await expect(text.text()).rejects.toHaveProperty('name', 'TypeError');
    await expect(text.json()).rejects.toHaveProperty('name', 'TypeError');
    await expect(text.arrayBuffer()).rejects.toHaveProperty('name', 'TypeError');

    const json = make();
    expect(await json.json()).toEqual(JSON.parse(BODY));
    await expect(json.text()).rejects.toHaveProperty('name', 'TypeError');
  });

  it('gives the same bytes as a stream, an ArrayBuffer or a Blob (UTF-8)', async () => {
    const expected = new TextEncoder().encode(BODY);
    const streamed = make();
    expect(streamed.body).not.toBeNull();
    expect(new Uint8Array(await new Response(streamed.body).arrayBuffer())).toEqual(expected);
    expect(streamed.bodyUsed).toBe(true);
    await expect(streamed.text()).rejects.toHaveProperty('name', 'TypeError');

    expect(new Uint8Array(await make().arrayBuffer())).toEqual(expected);
    expect(await (await make().blob()).text()).toBe(BODY);
    const bytes = (make() as Response & { bytes(): Promise<Uint8Array> }).bytes();
    expect(new Uint8Array(await bytes)).toEqual(expected);
  });

  it('clones an unread answer into a second copy, and refuses to clone a read one', async () => {
    const response = make();
    const copy = response.clone();
    expect(await copy.json()).toEqual(JSON.parse(BODY));
    expect(copy.headers.get('x-request-id')).toBe('req_1');
    expect(await response.text()).toBe(BODY);
    expect(() => response.clone()).toThrow(TypeError);

    const streamedFirst = make();
    void streamedFirst.body;
    expect(await streamedFirst.clone().text()).toBe(BODY);
    expect(await streamedFirst.text()).toBe(BODY);
  });

  it('a read answer whose body is then asked for gives a used stream', async () => {
    const response = make();
    await response.text();
    expect(response.bodyUsed).toBe(true);
    expect(response.body).not.toBeNull();
    expect(() => new Response(response.body)).toThrow(/disturbed or locked/);
  });
});

test('the main entry imports where no global Response exists (a jsdom test environment)', () => {
  const saved = globalThis.Response;
  Reflect.deleteProperty(globalThis, 'Response');
  try {
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded afresh, with Response gone
      const library = require('../../lib/index') as { observeLoop?: unknown };
      expect(typeof library.observeLoop).toBe('function');
    });
  } finally {
    globalThis.Response = saved;
  }
});
