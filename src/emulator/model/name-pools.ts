/** Value pools the generated people, places and shops are drawn from. */

export const FIRST_NAMES = [
  'Maria',
  'Giorgos',
  'Eleni',
  'Dimitris',
  'Katerina',
  'Nikos',
  'Sofia',
  'Kostas',
  'Anna',
  'Yannis',
  'Zoë',
  'Αλέξης',
  'Δέσποινα',
  'Chloé',
  'José',
  'Liam',
  'Olivia',
  'Noah',
  'Emma',
  'Björn',
] as const;

export const LAST_NAMES = [
  'Papadopoulos',
  'Nikolaou',
  'Georgiou',
  'Ioannou',
  'Konstantinou',
  'Pappas',
  'Vlachou',
  'Oikonomou',
  "O'Connor",
  'Müller',
  'García',
  'Παπαδάκη',
  'Smith',
  'Dubois',
  'van der Berg',
  'Rossi',
] as const;

/** ASCII spellings used to build e-mail addresses. */
export const EMAIL_DOMAINS = ['example.com', 'mail.example.org', 'inbox.example.net'] as const;

export const CITIES = [
  'Athens',
  'Thessaloniki',
  'Patras',
  'Heraklion',
  'Λάρισα',
  'Volos',
  'Limassol',
  'Nicosia',
] as const;

export const LANGUAGES = ['el', 'en', 'de', 'fr'] as const;

export const NATIONALITIES = ['Greek', 'Cypriot', 'German', 'British', 'French', 'Italian'] as const;

export const COUNTRIES = ['Greece', 'Greece', 'Greece', 'Cyprus', 'Germany'] as const;

export const SOURCES = ['pos', 'web', 'app', 'import', 'survey'] as const;

export const GENDERS = ['M', 'F', 'U'] as const;

/** Brands and their branches, shared by survey answers and loyalty postings. */
export const BRANDS: ReadonlyArray<{ name: string; branches: readonly string[] }> = [
  { name: 'Aroma Coffee', branches: ['Syntagma', 'Kifisia', 'Glyfada', 'Piraeus Port'] },
  { name: 'Pita & Co', branches: ['Monastiraki', 'Ladadika', 'Marousi'] },
  { name: 'Ψητό House', branches: ['Κέντρο', 'Καλαμαριά'] },
  { name: "Nick's Bakery", branches: ['Patras Centre', 'Rio'] },
];

export const STAFF = ['Eleni K.', 'Petros M.', 'Anna-Maria', 'Σταύρος', 'Jean-Luc'] as const;

export const OPERATORS = ['POS-01', 'POS-02', 'kiosk', 'web'] as const;

export const STORE_NAMES = ['Syntagma', 'Kifisia', 'Glyfada', 'Monastiraki', 'Ladadika', 'Κέντρο'] as const;
