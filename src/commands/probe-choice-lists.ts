import { type ChoiceListForm, readChoiceList, readFieldOptions } from '../transform/choice-lists.js';
import type { Finding } from './probe-finding.js';

/**
 * How a multiple-choice field's options travel in one string: the values the accounts export served (`fieldValues`,
 * by field name) of the fields the main profile (`fields`) defines with `multiple` and `options`, read under each
 * form `source.multiple_choice` can state; `config` is the form the job states.
 */
export function multipleChoiceFinding(
  fields: unknown,
  fieldValues: ReadonlyMap<string, ReadonlySet<string>>,
  config: ChoiceListForm,
): Finding {
  const name = 'multiple-choice values';
  const multiple = new Map<string, Array<{ key: string; label: string }>>();
  for (const f of Array.isArray(fields) ? fields : []) {
    const { name: field, multiple: several, options } = (f ?? {}) as Record<string, unknown>;
    if (typeof field !== 'string' || String(several) !== 'true' || !Array.isArray(options)) continue;
    multiple.set(field, readFieldOptions(options));
  }
  if (multiple.size === 0) {
    return {
      name,
      service: 'no field of the main profile is multiple with options',
      config,
      verdict: 'seen',
    };
  }
  const values = [...multiple].flatMap(([field, options]) =>
    [...(fieldValues.get(field) ?? [])].map((value) => ({ value, options })),
  );
  if (values.length === 0) {
    return {
      name,
      service: `not settled: the accounts read hold no value of ${[...multiple.keys()].map((f) => JSON.stringify(f)).join(', ')}`,
      config,
      verdict: 'unsettled',
    };
  }
  const refused = (form: ChoiceListForm) =>
    values.filter(({ value, options }) => 'problem' in readChoiceList(value, options, form)).length;
  const forms: ChoiceListForm[] = ['auto', 'comma', 'semicolon', 'pipe', 'json'];
  const counts = new Map(forms.map((form) => [form, refused(form)]));
  const reads = forms.filter((form) => form !== 'auto' && counts.get(form) === 0);
  const service =
    `${values.length} value(s) of ${[...multiple.keys()].map((f) => JSON.stringify(f)).join(', ')}; ` +
    (reads.length > 0 ? `each reads as one list as ${reads.join(', ')}` : 'no one form reads each as one list');
  const here = counts.get(config)!;
  if (here === 0) return { name, service, config, verdict: 'agrees' };
  // the form that refuses fewest, the operator's to state; what no form reads loads as NULL, said in a note
  const best = reads.length === 1 ? reads[0]! : forms.reduce((a, b) => (counts.get(b)! < counts.get(a)! ? b : a));
  const left = counts.get(best)!;
  return {
    name,
    service: `${service}; ${here} refused as ${config}`,
    config,
    verdict: 'differs',
    set: [
      ...(best !== config ? [`multiple_choice: ${best}`] : []),
      ...(left > 0
        ? [
            `# ${left} value(s) read as more than one list of options, or none, whatever the form: they load as NULL (_etl_field_rejects)`,
          ]
        : []),
    ],
  };
}
