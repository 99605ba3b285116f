/**
 * The few W3C WebDriver (classic, over HTTP) commands the WebKit engine needs, with `fetch`: a session, navigation,
 * script, frames, element clicks and keys, window size and screenshots. Each failure names the command and the
 * driver's own error code and message.
 *
 * @example
 * const driver = new WebDriverSession('http://127.0.0.1:4444', sessionId);
 * await driver.navigate('http://127.0.0.1:3000/');
 * await driver.execute('document.title'); // "Shop"
 */

/** An element reference as WebDriver sends it (the key is the spec's fixed identifier). */
export type ElementReference = { 'element-6066-11e4-a52e-4f735466cecf': string };
export const ELEMENT_KEY = 'element-6066-11e4-a52e-4f735466cecf';

/** Longer than any one command takes (axe-core's run on a loaded machine is the longest, a few seconds). */
const COMMAND_TIMEOUT_MS = 45_000;

/** One WebDriver command: answers `value`, or throws with the driver's error. */
export async function command<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const name = `WebDriver ${method} ${path.replace(/^\/session\/[^/]+/, '')}`;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      // A command the browser never answers fails the step with its name instead of hanging the test.
      signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS),
      headers: { 'content-type': 'application/json; charset=utf-8' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new Error(`${name}: no answer (${error instanceof Error ? error.message : String(error)})`);
  }
  const answer = (await response.json()) as { value: T & { error?: string; message?: string } };
  if (!response.ok) {
    throw new Error(`${name}: ${answer.value.error}: ${answer.value.message}`);
  }
  return answer.value;
}

/** A WebDriver session (one browser window) on a running driver. */
export class WebDriverSession {
  private readonly path: string;

  constructor(
    private readonly base: string,
    readonly id: string,
  ) {
    this.path = `/session/${id}`;
  }

  /** Creates a session with `capabilities` (alwaysMatch). */
  static async create(base: string, capabilities: Record<string, unknown>): Promise<WebDriverSession> {
    const created = await command<{ sessionId: string }>(base, 'POST', '/session', {
      capabilities: { alwaysMatch: capabilities },
    });
    return new WebDriverSession(base, created.sessionId);
  }

  private send<T>(method: string, path: string, body?: unknown): Promise<T> {
    return command<T>(this.base, method, `${this.path}${path}`, body);
  }

  navigate(url: string): Promise<null> {
    return this.send('POST', '/url', { url });
  }

  currentUrl(): Promise<string> {
    return this.send('GET', '/url');
  }

  /** Evaluates `expression` in the current browsing context (a returned promise is awaited by the driver). */
  execute<T>(expression: string): Promise<T> {
    return this.send('POST', '/execute/sync', { script: `return ${expression};`, args: [] });
  }

  /** Switches to the top-level document (`null`) or into the iframe `element`. */
  switchToFrame(element: ElementReference | null): Promise<null> {
    return this.send('POST', '/frame', { id: element });
  }

  /**
   * Clicks at (`x`, `y`) of the viewport in the driver's pointer coordinates (the Actions API: a real pointer
   * down and up, no interception check).
   */
  async clickAt(x: number, y: number): Promise<void> {
    await this.send('POST', '/actions', {
      actions: [
        {
          type: 'pointer',
          id: 'mouse',
          parameters: { pointerType: 'mouse' },
          actions: [
            { type: 'pointerMove', origin: 'viewport', x: Math.round(x), y: Math.round(y) },
            { type: 'pointerDown', button: 0 },
            { type: 'pointerUp', button: 0 },
          ],
        },
      ],
    });
    await this.send('DELETE', '/actions');
  }

  /** Types `text` into the element (WebDriver's Element Send Keys: focus, then key by key). */
  async sendKeys(element: ElementReference, text: string): Promise<void> {
    await this.send('POST', `/element/${element[ELEMENT_KEY]}/value`, { text });
  }

  setWindowRect(width: number, height: number): Promise<unknown> {
    return this.send('POST', '/window/rect', { width, height });
  }

  setTimeouts(timeouts: { pageLoad?: number; script?: number; implicit?: number }): Promise<null> {
    return this.send('POST', '/timeouts', timeouts);
  }

  /** The viewport as a PNG. */
  async screenshot(): Promise<Buffer> {
    return Buffer.from(await this.send<string>('GET', '/screenshot'), 'base64');
  }

  async delete(): Promise<void> {
    await this.send('DELETE', '');
  }
}
