/**
 * DNS-style name checks used by CRD validation, with upstream's error texts.
 *
 * CRD names (plural, singular, short names, categories, version names) are DNS-1035 labels and the
 * group is a DNS-1123 subdomain. Each check returns the list of problems (empty when valid), worded
 * like upstream's `IsDNS1035Label` / `IsDNS1123Subdomain`, so `definitions` can join them into a
 * field error's detail.
 */

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Problems of `value` as a DNS-1035 label (lowercase, starts with a letter, at most 63 characters). */
export function dns1035LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(value)) {
    errors.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errors;
}

/** Problems of `value` as a DNS-1123 subdomain (lowercase, dot-separated labels, at most 253 characters). */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errors.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return errors;
}
