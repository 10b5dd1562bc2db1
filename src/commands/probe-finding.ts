/**
 * One convention the spec leaves open, as the probe found it: what the service does, what the config says (where
 * a key says it), and whether they agree. `unsettled` is a finding the probe could not make (no data where it
 * looked, requests spent); `seen` is what the pipeline takes as it comes (it has no key), said for the operator.
 */
export interface Finding {
  name: string;
  service: string;
  config: string | null;
  verdict: 'agrees' | 'differs' | 'unsettled' | 'seen';
  /** `jobs.yaml` lines that make the config agree (under `source:`). */
  set?: string[];
}
