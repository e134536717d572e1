{{/*
One Deployment per role, from one definition so the roles cannot drift apart:
(dict "context" $ "role" "web"|"worker"). The same image, command, port, probes, security context
and volumes as deploy/base/{web,worker}-deployment.yaml (their comments explain each choice);
web alone gets the optional intake tokens and the preStop pause.
*/}}
{{- define "escalator.deployment" -}}
{{- $ := .context -}}
{{- $role := .role -}}
{{- $values := index $.Values $role -}}
{{- $secret := $.Values.secrets.name -}}
{{- $keys := $.Values.secrets.keys -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "escalator.fullname" $ }}-{{ $role }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "escalator.labels" $ | nindent 4 }}
    app.kubernetes.io/component: {{ $role }}
spec:
  replicas: {{ $values.replicas }}
  revisionHistoryLimit: {{ $values.revisionHistoryLimit }}
  selector:
    matchLabels:
      {{- include "escalator.roleSelectorLabels" (dict "context" $ "role" $role) | nindent 6 }}
  strategy:
    {{- toYaml $values.strategy | nindent 4 }}
  template:
    metadata:
      labels:
        {{- include "escalator.labels" $ | nindent 8 }}
        app.kubernetes.io/component: {{ $role }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # Environment variables are read once at boot: a changed setting must roll the pods.
        checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") $ | sha256sum }}
        checksum/relay-targets: {{ include (print $.Template.BasePath "/relay-targets.yaml") $ | sha256sum }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "escalator.serviceAccountName" $ }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      {{- if not (kindIs "invalid" $values.hostUsers) }}
      hostUsers: {{ $values.hostUsers }}
      {{- end }}
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds }}
      {{- with $.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- range . }}
        - name: {{ . }}
        {{- end }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        # 1000 is the `node` user the Dockerfile switches to (USER node).
        runAsUser: 1000
        runAsGroup: 1000
        fsGroup: 1000
        seccompProfile:
          {{- toYaml $values.seccompProfile | nindent 10 }}
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "escalator.roleSelectorLabels" (dict "context" $ "role" $role) | nindent 14 }}
      {{- with $values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: escalator
          image: {{ include "escalator.image" $ }}
          imagePullPolicy: {{ $.Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: {{ $.Values.port }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "escalator.fullname" $ }}-config
          env:
            - name: ESCALATOR_ROLE
              value: {{ $role }}
            - name: NODE_ENV
              # In production mode a process without App credentials stops with the list of
              # missing variables instead of opening Probot's setup page.
              value: production
            # --- required: the process refuses to start without them (src/config/env.schema.ts)
            - name: REDIS_URL
              {{- if $.Values.redis.url }}
              value: {{ $.Values.redis.url | quote }}
              {{- else }}
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: {{ $keys.redisUrl }} }
              {{- end }}
            - name: APP_ID
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: {{ $keys.appId }} }
            - name: PRIVATE_KEY
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: {{ $keys.privateKey }} }
            - name: WEBHOOK_SECRET
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: {{ $keys.webhookSecret }} }
            {{- if eq $role "web" }}
            # --- optional: each enables one route and leaves it 404 while unset
            {{- range list (list "ESCALATOR_REGISTRY_TOKEN" $keys.registryToken) (list "ESCALATOR_CI_TOKEN" $keys.ciToken) (list "ESCALATOR_ADMIN_TOKEN" $keys.adminToken) (list "ESCALATOR_AGENT_TOKEN" $keys.agentToken) }}
            {{- $key := index . 1 }}
            {{- if $key }}
            - name: {{ index . 0 }}
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: {{ $key }}, optional: true }
            {{- end }}
            {{- end }}
            {{- end }}
          livenessProbe:
            # The process answers at all; deliberately independent of Redis and GitHub.
            httpGet: { path: /healthz, port: http }
            {{- toYaml $values.livenessProbe | nindent 12 }}
          readinessProbe:
            # Redis answers PING and credentials are loaded.
            httpGet: { path: /readyz, port: http }
            {{- toYaml $values.readinessProbe | nindent 12 }}
          {{- if eq $role "web" }}
          lifecycle:
            preStop:
              # exec, not the `sleep` action, which needs Kubernetes 1.30.
              exec:
                command: ["sleep", "{{ $values.preStopSleepSeconds }}"]
          {{- end }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            allowPrivilegeEscalation: false
            privileged: false
            readOnlyRootFilesystem: true
            runAsNonRoot: true
            capabilities:
              drop: ["ALL"]
            {{- with $values.appArmorProfile }}
            appArmorProfile:
              {{- toYaml . | nindent 14 }}
            {{- end }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            - name: relay-targets
              mountPath: {{ include "escalator.relayTargetsDir" $ }}
              readOnly: true
            - name: relay-secrets
              mountPath: {{ include "escalator.relaySecretsDir" $ }}
              readOnly: true
      volumes:
        # The only writable path: the root filesystem is read-only.
        - name: tmp
          emptyDir:
            sizeLimit: {{ $values.tmpSizeLimit }}
        - name: relay-targets
          configMap:
            name: {{ include "escalator.relayTargetsConfigMap" $ }}
        - name: relay-secrets
          secret:
            secretName: {{ $.Values.relay.secretName }}
            # Absent when no relay target is configured; the pod starts anyway.
            optional: true
            defaultMode: 0440
{{- end -}}
