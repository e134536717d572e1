import { isScalar, parseAllDocuments } from 'yaml';
import { lineAt } from '../text.js';
import type { ChartArgumentKind } from '../kustomize/index.js';
import { shown } from './shown.js';

/**
 * Values of the repository that reach an argument list of helm (directly, or through kustomize's
 * HelmChartInflationGenerator), checked against what the tool expects before any tool runs (issue 31).
 *
 * Why: a release name is a positional argument, and helm's flag parser (cobra/pflag) reads any
 * argument that starts with `-` as a flag — `releaseName: "--set-file=leak=/proc/self/environ"`
 * made `helm template` print the worker's environment. Escalator puts `--` before the positional
 * arguments it passes itself (src/adapters/render/helm.ts), but kustomize builds helm's argument
 * list on its own (`HelmChart.AsHelmArgs`, api/types/helmchartargs.go of kustomize v5.5.0:
 * `template <releaseName> <chartHome>/<name> --namespace <ns> --name-template <t> -f <values>
 * --api-versions <v> --kube-version <v>`), so only refusing the value closes that way in.
 *
 * The rules are the tools' own:
 * - release names: helm's `ValidateReleaseName` (helm v3.17.3 pkg/chartutil/validate_name.go,
 *   v4.1.4 pkg/chart/v2/util/validate_name.go): `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`,
 *   at most 53 characters (`maxReleaseNameLen`);
 * - namespaces: Kubernetes' `ValidateNamespaceName = NameIsDNSLabel` (k8s.io/apimachinery
 *   pkg/api/validation/generic.go; `IsDNS1123Label` in pkg/util/validation/validation.go):
 *   `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters;
 * - chart names: helm's `chartName` (v3.17.3 pkg/chartutil/create.go) `^[a-zA-Z0-9._-]+$`, and
 *   not starting with `-` (kustomize passes the name to `helm pull` as a positional argument);
 * - Kubernetes versions: what `chartutil.ParseKubeVersion` accepts, Masterminds/semver v3
 *   `NewVersion` (its loose `versionRegex`);
 * - chart versions: a SemVer version or a Masterminds/semver constraint (`^1.2`, `>=1.0.0 <2`,
 *   `1.x`, `*`), so nothing but version characters;
 * - API versions (`--api-versions`, a comma-separated list to helm): `[group/]version[/Kind]`;
 * - name templates: helm runs them as Go templates with sprig's `TxtFuncMap`
 *   (pkg/action/install.go `TemplateName`), which holds `env`, `expandenv` and `getHostByName`:
 *   refused when they name one of those, or when the text outside `{{ … }}` is not release-name text;
 * - values file paths and parameter names: no control characters, not starting with `-`.
 */
export type ArgumentKind = ChartArgumentKind | 'parameter-name';

/** A value of the repository bound for an argument list, where it is written and what it must be. */
export interface ArgumentRef {
  kind: ArgumentKind;
  /** Where in the file: `helmCharts[0].releaseName`, `spec.source.helm.namespace` (keys as written). */
  field: string;
  value: string;
}

const RELEASE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const CHART_NAME = /^[a-zA-Z0-9._][a-zA-Z0-9._-]*$/;
const KUBE_VERSION =
  /^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?(\+([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?$/;
const CHART_VERSION = /^[0-9A-Za-z.+^~*<>=!|][0-9A-Za-z.+^~*<>=!|, -]{0,127}$/;
const API_VERSION =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\/[A-Za-z][A-Za-z0-9]*)?$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const TEMPLATE_ACTION = /\{\{[\s\S]*?\}\}/g;
const ENVIRONMENT_FUNCTIONS = /\b(env|expandenv|getHostByName)\b/i;

const EXPECTED: Record<ArgumentKind, string> = {
  'release-name':
    "is not a Helm release name (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 53 characters)",
  namespace:
    "is not a Kubernetes namespace (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)",
  'chart-name': "is not a chart name (letters, digits, '.', '_' and '-', not starting with '-')",
  'chart-version': 'is not a chart version or version range (such as 1.2.3 or ^1.2)',
  'kube-version': 'is not a Kubernetes version (such as 1.31.0 or v1.31)',
  'api-version': 'is not an API version (such as apps/v1 or monitoring.coreos.com/v1/ServiceMonitor)',
  'name-template':
    'is not a name template Escalator passes to helm (release-name text and {{ }} actions that do not call env, expandenv or getHostByName)',
  'values-path': "is not a values file path Escalator passes to helm (no control characters, not starting with '-')",
  'parameter-name': "is not a Helm parameter name (no control characters, not starting with '-')",
  'extra-args': 'is a list of extra helm arguments, which Escalator never passes',
};

/** Is the value what the tool expects for this kind of argument? */
export function isExpectedArgument(kind: ArgumentKind, value: string): boolean {
  switch (kind) {
    case 'release-name':
      return value.length <= 53 && RELEASE_NAME.test(value);
    case 'namespace':
      return value.length <= 63 && DNS_LABEL.test(value);
    case 'chart-name':
      return CHART_NAME.test(value);
    case 'chart-version':
      return CHART_VERSION.test(value) && !value.endsWith(' ');
    case 'kube-version':
      return KUBE_VERSION.test(value);
    case 'api-version':
      return value.length <= 317 && API_VERSION.test(value);
    case 'name-template': {
      if (CONTROL.test(value)) return false;
      if ((value.match(TEMPLATE_ACTION) ?? []).some((action) => ENVIRONMENT_FUNCTIONS.test(action))) return false;
      const text = value.replace(TEMPLATE_ACTION, 'x');
      return !text.includes('{{') && !text.includes('}}') && RELEASE_NAME.test(text);
    }
    case 'values-path':
    case 'parameter-name':
      return value !== '' && !CONTROL.test(value) && !value.startsWith('-');
    case 'extra-args':
      return false;
  }
}

/** The path of a field as the readers name it (`spec.sources[1].helm.releaseName`). */
function fieldPath(field: string): Array<string | number> {
  const path: Array<string | number> = [];
  for (const match of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g))
    path.push(match[2] !== undefined ? Number(match[2]) : (match[1] as string));
  return path;
}

/**
 * The line a field is written on: the first document whose field holds this value, else the
 * first that has the field (a merge key can hide it from the path), else the first line that
 * holds the value, else 1.
 */
export function fieldLine(text: string, field: string, value?: string): number {
  const path = fieldPath(field);
  let holding: number | undefined;
  try {
    for (const doc of parseAllDocuments(text, { version: '1.1', merge: true, uniqueKeys: false, logLevel: 'silent' })) {
      const node = doc.getIn(path, true) as unknown;
      const range = (node as { range?: [number, number, number] } | undefined)?.range;
      if (!range) continue;
      if (value === undefined || (isScalar(node) && String(node.value) === value)) return lineAt(text, range[0]);
      holding ??= lineAt(text, range[0]);
    }
  } catch {
    // Unparseable files are refused as such elsewhere; fall back to the text.
  }
  if (holding !== undefined) return holding;
  const first = value?.split('\n')[0];
  if (first) {
    const at = text.indexOf(first);
    if (at >= 0) return lineAt(text, at);
  }
  return 1;
}

/**
 * Each argument that is not what the tool expects, as `<file> line <n> <field>: <value> is not …`.
 * `within` names the field of `text` that holds the arguments' own YAML (an inline generator
 * configuration of a kustomization): its line is given, and it prefixes each field.
 */
export function refuseArguments(
  file: string,
  text: string | undefined,
  refs: readonly ArgumentRef[],
  within?: string,
): string[] {
  return refs
    .filter((ref) => !isExpectedArgument(ref.kind, ref.value))
    .map((ref) => {
      const valued = ref.kind !== 'extra-args';
      const line =
        text === undefined
          ? 1
          : within
            ? fieldLine(text, within)
            : fieldLine(text, ref.field, valued ? ref.value : undefined);
      const field = within ? `${within} ${ref.field}` : ref.field;
      return `${file} line ${line} ${field}:${valued ? ` ${shown(ref.value)}` : ''} ${EXPECTED[ref.kind]}`;
    });
}
