// The real-operator suite: its files run only inside the bed's network namespace
// (test/infra/harness/operator-bed/in-netns.sh), so they are a jest project of their own, run by
// `make test-operator`, not by the e2e project.
const root = require('../../jest.config.js');
const { displayName: _d, testMatch: _t, ...base } = root.projects.find((p) => p.displayName === 'e2e');
module.exports = { ...base, rootDir: '../..', displayName: 'operator', testMatch: ['<rootDir>/test/operator/**/*.test.ts'] };
