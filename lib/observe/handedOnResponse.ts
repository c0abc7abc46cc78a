/**
 * A whole answer the metered fetch has read, handed to the SDK as a `Response` that keeps the
 * text rather than a stream of it: `text()` and `json()` answer from the string (the `openai`
 * client and LangChain read so), and a stream is made only if something asks for the body itself
 * (the Anthropic client and the AI SDK do). Serves the `meter` bench's JSON target: a `Response`
 * built on the text costs a JSON answer ~40 µs more to read back (a stream made, read and
 * decoded), about 4% of the passthrough's CPU for that answer.
 *
 * It reads as a `Response` read once: a second read throws the `TypeError` a used body does, and
 * `clone()` of an unread one is a second copy.
 */
export function handedOnResponse(text: string, init: ResponseInit): Response {
  // Made on first use, not at import: the main entry loads this file, and a runtime without a
  // global `Response` (a jsdom test environment) must still import the library.
  HandedOn ??= handedOnClass();
  return new HandedOn(text, init) as unknown as Response;
}

let HandedOn: ReturnType<typeof handedOnClass> | undefined;

function handedOnClass() {
  // `Response`, typed as what it makes before these methods replace its own: undici's types
  // declare those as properties, which a class cannot override with methods or accessors.
  const ResponseBase: new (body: null, init: ResponseInit) => Pick<Response, 'status' | 'statusText' | 'headers'> =
    Response;

  return class HandedOnResponse extends ResponseBase {
    /** The text, until it is read. */
    #text: string;
    /** The `Response` a stream of the text is read from, once the body is asked for other than as text or JSON. */
    #whole: Response | undefined;
    #used = false;

    constructor(text: string, init: ResponseInit) {
      super(null, init);
      this.#text = text;
    }

    get body(): Response['body'] {
      return this.#streamed().body;
    }

    get bodyUsed(): boolean {
      return this.#whole?.bodyUsed ?? this.#used;
    }

    text(): Promise<string> {
      if (this.#whole !== undefined) return this.#whole.text();
      if (this.#used) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
      this.#used = true;
      const text = this.#text;
      this.#text = '';
      return Promise.resolve(text);
    }

    json(): Promise<unknown> {
      return this.text().then((text) => JSON.parse(text) as unknown);
    }

    arrayBuffer(): Promise<ArrayBuffer> {
      return this.#streamed().arrayBuffer();
    }

    blob(): Promise<Blob> {
      return this.#streamed().blob();
    }

    formData(): Promise<FormData> {
      return this.#streamed().formData();
    }

    /** Node 22 and later read a body as bytes too. */
    bytes(): Promise<Uint8Array> {
      return this.#streamed()
        .arrayBuffer()
        .then((buffer) => new Uint8Array(buffer));
    }

    clone(): Response {
      if (this.bodyUsed) throw new TypeError('Response.clone: the body has already been read');
      const init = { status: this.status, statusText: this.statusText, headers: this.headers };
      return this.#whole === undefined
        ? handedOnResponse(this.#text, init)
        : new Response(this.#whole.clone().body, init);
    }

    /**
     * The `Response` the body is read from as a stream, from here on: made on the text (one
     * already read, if the text was), with only the content type, which `blob()` and
     * `formData()` read; the status and the other headers are this one's.
     */
    #streamed(): Response {
      if (this.#whole === undefined) {
        const type = this.headers.get('content-type');
        this.#whole = new Response(this.#text, type === null ? undefined : { headers: { 'content-type': type } });
        if (this.#used) void this.#whole.text();
      }
      return this.#whole;
    }
  };
}
