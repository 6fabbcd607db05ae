// ESM-only packages (@kubernetes/client-node 1.x and its dependencies) must be transformed too.
const esmPackages = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose', 'hpagent'];
const base = {
  transform: { '^.+\\.[tj]sx?$': ['@swc/jest'] },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  testEnvironment: 'node',
};
module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...base, displayName: 'workflow', testMatch: ['<rootDir>/test/workflow/**/*.test.ts'] },
    { ...base, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    // The short chaos campaign measures recovery times: a project of its own, run alone.
    { ...base, displayName: 'chaos', testMatch: ['<rootDir>/test/infra/chaos/**/*.test.ts'] },
  ],
};
