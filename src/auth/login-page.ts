/**
 * The login page: `web/login.html` and `web/login.ts`, the latter bundled for the browser (with the OPAQUE
 * client's WebAssembly inlined) by the build (`scripts/build.mjs`) into `dist/web/`, with the page beside
 * it. The server only reads those two files, each once, on first request; nothing is bundled at run time.
 *
 * The page's Content-Security-Policy allows only its own script, plus `wasm-unsafe-eval` which the OPAQUE
 * client's WebAssembly needs; no inline script or style (its stylesheet is the UI's `/ui/app.css`), no other origin.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `dist/web`, reached from `src/auth/` (tests under tsx) as from `dist/auth/` (the built server). */
const WEB_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'web');

export interface LoginPage {
  html(): string;
  script(): Promise<string>;
  headers(): Record<string, string>;
}

export function createLoginPage(webDir = WEB_DIR): LoginPage {
  let html: string | undefined;
  let script: Promise<string> | undefined;
  return {
    html() {
      html ??= readFileSync(join(webDir, 'login.html'), 'utf8');
      return html;
    },
    script() {
      script ??= readFile(join(webDir, 'login.js'), 'utf8');
      script.catch(() => { script = undefined; }); // a failed read is retried on the next request
      return script;
    },
    headers() {
      return {
        'content-security-policy': "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
      };
    },
  };
}
