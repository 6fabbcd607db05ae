// The workflow patches in force. Rollouts are pinned to the worker build that started them
// (Temporal Worker Versioning, docs/upgrading.md): a new build never replays an older build's
// rollout, so a change of workflow code needs no patch. A patch is allowed for one case only: a fix
// that must reach rollouts already pinned to an old build, which the operator then moves onto the
// new build (`temporal workflow update-options`); the new code guards the change with the
// SDK's patch call under this id, and deprecates it once no such rollout can remain.
//
// test/unit/workflow-versions.test.ts fails when a patch call in workflows/ names an id missing here,
// when an id here is used nowhere, and when the package version reaches an entry's `retireAfter`:
// the patch (its old branch, then the entry) is removed in that release.

export interface Patch {
  /** The id the workflow code passes to the SDK's patch call (and later deprecatePatch). */
  readonly id: string;
  /** The release (package.json version) that introduced it. */
  readonly release: string;
  /**
   * The release it is removed in (semver order, pre-releases first: `1.3.0-rc.1` < `1.3.0`; write
   * `1.3.0-0` to have the release candidates without it too). Choose one by which every rollout
   * started on a build without the fix has ended: its old branch then guards nothing.
   */
  readonly retireAfter: string;
}

/** Empty: the 1.0 baseline has no patches. */
export const PATCHES: readonly Patch[] = [];
