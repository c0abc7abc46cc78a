/**
 * A whole answer the metered fetch has read, handed to the SDK as a `Response` that keeps the
 * text rather than a stream of it: `text()` and `json()` answer from the string, and a stream is
 * made only if something asks for the body itself. Serves the `meter` bench's JSON target: a
 * `Response` built on the text costs a JSON answer ~40 µs more to read back (a stream made, read
 * and decoded), about 4% of the passthrough's CPU for that answer.
 *
 * It reads as a `Response` read once: a second read throws the `TypeError` a used body does, and
 * `clone()` of an unread one is a second copy.
 */
export function handedOnResponse(text: string, init: ResponseInit): Response {
  return new HandedOnResponse(text, init) as unknown as Response;
}

/**
 * `Response`, typed as what it makes before our methods replace its own: undici's types declare
 * those as properties, which a class cannot override with methods or accessors.
 */
const ResponseBase: new (body: null, init: ResponseInit) => Pick<Response, 'status' | 'statusText' | 'headers'> =
  Response;

class HandedOnResponse extends ResponseBase {
  readonly #text: string;
  /** The `Response` on the text, made when the body is asked for other than as text or JSON. */
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
    try {
      this.#use();
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve(this.#text);
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
    if (this.#whole !== undefined) return this.#whole.clone();
    return handedOnResponse(this.#text, this.#init());
  }

  #use(): void {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
  }

  /** The `Response` a stream of the text is read from, from here on (one already read, if the text was). */
  #streamed(): Response {
    if (this.#whole === undefined) {
      this.#whole = new Response(this.#text, this.#init());
      if (this.#used) void this.#whole.text();
    }
    return this.#whole;
  }

  #init(): ResponseInit {
    return { status: this.status, statusText: this.statusText, headers: this.headers };
  }
}
