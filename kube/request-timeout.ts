// A bound on every single Kubernetes API request (not on watches).
import * as k8s from '@kubernetes/client-node';

/** Default timeout of one API request: an answer takes milliseconds; a request the API server (or a proxy before it) never answers must not hold a step, or a status write, much longer. */
export const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Request options that abort a request after `ms`: a request sent on a half-open keep-alive
 * connection would otherwise hang forever, and with it whatever waits for it.
 */
export function withRequestTimeout(ms: number, opt?: k8s.ConfigurationOptions<k8s.ObservableMiddleware>): k8s.ConfigurationOptions<k8s.ObservableMiddleware> {
  const timeout: k8s.ObservableMiddleware = {
    pre: (req) => {
      req.setSignal(AbortSignal.timeout(ms));
      return new k8s.Observable(Promise.resolve(req));
    },
    post: (rsp) => new k8s.Observable(Promise.resolve(rsp)),
  };
  return { ...opt, middleware: [...(opt?.middleware ?? []), timeout], middlewareMergeStrategy: 'append' };
}
