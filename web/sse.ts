/**
 * Server-sent events over fetch(): the browser's EventSource cannot send the Authorization header that
 * `/api/events` needs, so the stream is read with a ReadableStream and parsed here (the HTML standard's
 * event-stream rules: `event`, `data`, `id`, `retry`, comments, a blank line dispatches). It reconnects
 * after the server's `retry` delay with `Last-Event-ID`, so the server replays what was missed or sends
 * `reset`; a 401 or 403 stops it (reconnecting cannot help).
 */
export interface SseEvent { type: string; data: string; id: string }

export interface SseOptions {
  headers: () => Record<string, string>;
  onEvent: (e: SseEvent) => void;
  /** `open` when the response starts, `retrying` when it dropped, `stopped` on 401/403 with the message. */
  onState: (state: 'open' | 'retrying' | 'stopped', detail?: string) => void;
}

export function openEventStream(url: string, o: SseOptions): { close(): void } {
  let lastId = '';
  let retryMs = 3000;
  let closed = false;
  let ac: AbortController | undefined;

  async function connect(): Promise<void> {
    ac = new AbortController();
    const headers: Record<string, string> = { accept: 'text/event-stream', ...o.headers() };
    if (lastId !== '') headers['last-event-id'] = lastId;
    const res = await fetch(url, { headers, signal: ac.signal, cache: 'no-store' });
    if (res.status === 401 || res.status === 403) {
      const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
      closed = true;
      o.onState('stopped', body.error?.message ?? `HTTP ${res.status}`);
      return;
    }
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    o.onState('open');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let type = '';
    let data: string[] = [];
    let id = lastId;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          lastId = id;
          if (data.length > 0) o.onEvent({ type: type || 'message', data: data.join('\n'), id });
          type = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? '' : line.slice(colon + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (field === 'event') type = v;
        else if (field === 'data') data.push(v);
        else if (field === 'id' && !v.includes('\0')) id = v;
        else if (field === 'retry' && /^\d+$/.test(v)) retryMs = Number(v);
      }
    }
  }

  async function loop(): Promise<void> {
    while (!closed) {
      try {
        await connect();
      } catch {
        /* dropped or refused: retried below */
      }
      if (closed) return;
      o.onState('retrying');
      await new Promise((r) => setTimeout(r, retryMs));
    }
  }
  void loop();
  return { close() { closed = true; ac?.abort(); } };
}
