/**
 * The login page: `web/login.html` and `web/login.ts`, the latter bundled for the browser with esbuild the
 * first time `/login.js` is asked for (about a second, once per process; it inlines the OPAQUE client's
 * WebAssembly), then served from memory. Building on demand keeps start-up and the tests that never open
 * the page fast, and needs no build step before `npm start`.
 *
 * The page's Content-Security-Policy allows only its own script, plus `wasm-unsafe-eval` which the OPAQUE
 * client's WebAssembly needs; no inline script, no other origin.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');

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
      script ??= (async () => {
        const esbuild = await import('esbuild');
        const out = await esbuild.build({
          entryPoints: [join(webDir, 'login.ts')],
          bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', minify: true,
          legalComments: 'none', logLevel: 'silent',
        });
        return out.outputFiles[0]!.text;
      })();
      script.catch(() => { script = undefined; }); // a failed build is retried on the next request
      return script;
    },
    headers() {
      return {
        'content-security-policy': "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; style-src 'self' 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
      };
    },
  };
}
