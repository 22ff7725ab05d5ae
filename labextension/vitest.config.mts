import { defineConfig } from 'vitest/config';

// Unit tests of the sidebar's model (test/*.test.ts). The model uses `window` timers and
// `document` visibility, hence a DOM; the REST layer (src/request.ts) is mocked per test file.
export default defineConfig({
  test: {
    environment: 'jsdom',
    include: ['test/**/*.test.ts']
  }
});
