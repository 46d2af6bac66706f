// ESLint flat config: typescript-eslint's type-checked rules over the client
// (src/), its tests and the end-to-end harness. Generated FlatBuffers code is
// never edited, so it is not linted.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-e2e/', 'dist-admin/', 'node_modules/', 'src/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './tsconfig.node.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      'no-restricted-properties': [
        'error',
        { property: 'innerHTML', message: 'Network text is rendered with textContent only.' },
        { property: 'outerHTML', message: 'Network text is rendered with textContent only.' },
        { property: 'insertAdjacentHTML', message: 'Network text is rendered with textContent only.' },
      ],
      eqeqeq: 'error',
    },
  },
  { files: ['src/**/*.ts', 'admin/**/*.ts'], languageOptions: { globals: globals.browser } },
  { files: ['e2e/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', '*.config.ts', '*.config.js'], languageOptions: { globals: globals.node } },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
