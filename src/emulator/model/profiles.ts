import { CUSTOM_FIELD_POOL } from './custom-field-pool.js';

/** The account profiles of the business (`GET /accounts/profiles/`). */
export const PROFILES = [
  { id: 1, label: 'Customers', main: true, used: true },
  { id: 2, label: 'Staff', main: false, used: false },
] as const;

const STANDARD_FIELDS = [
  ['phone', 'Phone', 2],
  ['email', 'E-mail', 3],
  ['first', 'First name', 1],
  ['last', 'Last name', 1],
  ['birthdate', 'Birth date', 4],
  ['gender', 'Gender', 5],
  ['city', 'City', 1],
  ['country', 'Country', 1],
  ['language', 'Language', 5],
  ['nationality', 'Nationality', 1],
] as const;

const TYPE_BY_KIND = { text: 1, date: 4, choice: 5, choices: 5, flag: 6, number: 7 } as const;

/**
 * A field only the unused staff profile has, whose name, label and options hold NUL characters: reference
 * data a client must store even though its warehouse's text cannot hold U+0000. No account carries it.
 */
export const STAFF_ONLY_FIELD = {
  name: 'badge\u0000number',
  label: 'Badge\u0000 number',
  options: [{ key: 'desk\u0000', value: 'Front\u0000desk' }],
} as const;

/**
 * With `badProfileField`, the field of the customers' profile served with flags no client can read: `required` and
 * `multiple` as words. Its other members are as always.
 */
export const BAD_PROFILE_FIELD = { profileId: 1, fieldId: 1007, required: 'sometimes', multiple: 'several' } as const;

/**
 * Profile `id` with its fields (`GET /accounts/profiles/{id}`), or null when there is none; with `badField`, one of
 * them is {@link BAD_PROFILE_FIELD}.
 */
export function profileWithFields(id: number, badField = false): Record<string, unknown> | null {
  const profile = PROFILES.find((p) => p.id === id);
  if (!profile) return null;
  const common = (fieldId: number, order: number) => ({
    id: id * 1000 + fieldId,
    profileId: id,
    orderValue: order,
    renderTypes: [1],
    required: false,
    multiple: false,
    conditionalFieldId: 0,
    profileType: 1,
    fieldId,
    uniqueKey: false,
    autoGen: false,
    setting: false,
    used: true,
    autoLength: 0,
  });
  const standard = STANDARD_FIELDS.map(([name, label, typeId], n) => ({
    ...common(n + 1, n + 1),
    name,
    label,
    typeId,
    isBusiness: false,
    ...(name === 'phone' || name === 'email' ? { uniqueKey: true } : {}),
    ...(name === 'birthdate' ? { format: 'yyyy-MM-dd' } : {}),
  }));
  const custom = CUSTOM_FIELD_POOL.map((field, n) => ({
    ...common(100 + n, STANDARD_FIELDS.length + n + 1),
    name: field.name,
    label: field.label,
    typeId: TYPE_BY_KIND[field.kind],
    renderType: TYPE_BY_KIND[field.kind],
    isBusiness: true,
    columnNumber: `cf${n + 1}`,
    ...(field.options ? { options: field.options.map((value) => ({ key: value.toLowerCase(), value })) } : {}),
    ...(field.choices ? { multiple: true, options: field.choices.map((o) => ({ key: o.key, value: o.value })) } : {}),
    ...(field.format ? { format: field.format } : {}),
  }));
  // the unused (staff) profile has a field of its own
  const staffOnly = profile.used
    ? []
    : [
        {
          ...common(200, standard.length + custom.length + 1),
          ...STAFF_ONLY_FIELD,
          typeId: TYPE_BY_KIND.choice,
          renderType: TYPE_BY_KIND.choice,
          isBusiness: true,
        },
      ];
  const fields: Array<Record<string, unknown>> = [...standard, ...custom, ...staffOnly];
  const bad = badField && id === BAD_PROFILE_FIELD.profileId;
  return {
    id: String(profile.id),
    label: profile.label,
    main: profile.main,
    mainProfileId: 1,
    createdBy: 1,
    used: profile.used,
    profileFields: bad
      ? fields.map((f) =>
          f.id === BAD_PROFILE_FIELD.fieldId
            ? { ...f, required: BAD_PROFILE_FIELD.required, multiple: BAD_PROFILE_FIELD.multiple }
            : f,
        )
      : fields,
  };
}
