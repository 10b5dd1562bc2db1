/** The parser of Prometheus' text format the metrics tests read the metrics file with (it ships no types). */
declare module 'parse-prometheus-text-format' {
  interface MetricFamily {
    name: string;
    help: string;
    type: string;
    metrics: Array<{ value: string; labels?: Record<string, string> }>;
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
