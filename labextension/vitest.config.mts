import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, Plugin } from 'vitest/config';

// The card's front end as the kernel serves it (kernel/card/widget.py): one ES module made of
// views/preview.js followed by kernel/card/card.js, which calls the renderer without
// importing it. Tests import it as `virtual:jupyter-approvals-card` (typed in
// test/card-module.d.ts), so they run the very text a notebook runs.
const CARD_MODULE = 'virtual:jupyter-approvals-card';
const CARD_PARTS = [
  '../jupyter_approvals/views/preview.js',
  '../jupyter_approvals/kernel/card/card.js'
].map(part => fileURLToPath(new URL(part, import.meta.url)));

function cardModule(): Plugin {
  const resolved = '\0' + CARD_MODULE;
  return {
    name: 'jupyter-approvals-card',
    resolveId: id => (id === CARD_MODULE ? resolved : null),
    load(id) {
      if (id !== resolved) {
        return null;
      }
      for (const part of CARD_PARTS) {
        this.addWatchFile(part);
      }
      return CARD_PARTS.map(part => readFileSync(part, 'utf8')).join('');
    }
  };
}

// Unit tests of the sidebar (test/*.test.ts), the shared preview renderer and the card. The
// model uses timers and `document` visibility, the views build DOM, hence jsdom; the REST
// layer (src/request.ts) is mocked per test file.
export default defineConfig({
  plugins: [cardModule()],
  test: {
    environment: 'jsdom',
    include: ['test/**/*.test.ts']
  }
});
