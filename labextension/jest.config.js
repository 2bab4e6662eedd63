/**
 * Unit tests of the extension's pure modules (src/__tests__/*.spec.ts), as the
 * JupyterLab extension template runs them: jest through ts-jest, no browser.
 */
module.exports = {
  testEnvironment: 'node',
  testRegex: 'src/__tests__/.*\\.spec\\.ts$',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }]
  },
  moduleFileExtensions: ['ts', 'js', 'json']
};
