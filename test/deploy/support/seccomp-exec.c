/*
 * Runs a command under a seccomp filter built the way runc builds one from an OCI profile
 * (runc libcontainer/seccomp/patchbpf + seccomp_linux.go): the default action, then each rule's
 * names with its argument comparisons (OCI `value` is libseccomp's datum_a, `valueTwo` datum_b),
 * names this architecture does not know skipped. test/deploy/seccomp-profile.test.ts writes the
 * profile as lines: `<action> <errno> <name> <argc> [<index> <op> <a> <b>]...`.
 *
 * libseccomp's header is not installed where Escalator is developed, only the library, so the
 * few declarations used are spelt out here (seccomp.h of libseccomp 2.5).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *scmp_filter_ctx;
struct scmp_arg_cmp { unsigned int arg; int op; uint64_t datum_a; uint64_t datum_b; };
scmp_filter_ctx seccomp_init(uint32_t def_action);
int seccomp_syscall_resolve_name(const char *name);
int seccomp_rule_add_array(scmp_filter_ctx ctx, uint32_t action, int syscall, unsigned int arg_cnt,
                           const struct scmp_arg_cmp *arg_array);
int seccomp_load(scmp_filter_ctx ctx);

#define SCMP_ACT_ALLOW 0x7fff0000U
#define SCMP_ACT_ERRNO(x) (0x00050000U | ((x) & 0x0000ffffU))

static uint32_t action_of(const char *name, unsigned errno_ret) {
  if (strcmp(name, "SCMP_ACT_ALLOW") == 0) return SCMP_ACT_ALLOW;
  if (strcmp(name, "SCMP_ACT_ERRNO") == 0) return SCMP_ACT_ERRNO(errno_ret);
  fprintf(stderr, "seccomp-exec: unknown action %s\n", name);
  exit(125);
}

static int op_of(const char *name) {
  const char *ops[] = {"", "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ"};
  for (int i = 1; i < 8; i++)
    if (strcmp(name, ops[i]) == 0) return i;
  fprintf(stderr, "seccomp-exec: unknown operator %s\n", name);
  exit(125);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: seccomp-exec <rules file> <command> [args...]\n");
    return 125;
  }
  FILE *rules = fopen(argv[1], "r");
  if (!rules) { perror("seccomp-exec: rules"); return 125; }
  char action[64], name[64], def[64];
  unsigned errno_ret;
  if (fscanf(rules, "%63s %u", def, &errno_ret) != 2) return 125;
  scmp_filter_ctx ctx = seccomp_init(action_of(def, errno_ret));
  if (!ctx) return 125;
  unsigned argc_rule;
  while (fscanf(rules, "%63s %u %63s %u", action, &errno_ret, name, &argc_rule) == 4) {
    struct scmp_arg_cmp cmp[6];
    for (unsigned i = 0; i < argc_rule && i < 6; i++) {
      char op[64];
      unsigned long long a, b;
      if (fscanf(rules, "%u %63s %llu %llu", &cmp[i].arg, op, &a, &b) != 4) return 125;
      cmp[i].op = op_of(op);
      cmp[i].datum_a = a;
      cmp[i].datum_b = b;
    }
    int nr = seccomp_syscall_resolve_name(name);
    if (nr < 0) continue; /* not a system call of this architecture: runc skips it too */
    int rc = seccomp_rule_add_array(ctx, action_of(action, errno_ret), nr, argc_rule, cmp);
    if (rc != 0) { fprintf(stderr, "seccomp-exec: rule for %s refused (%d)\n", name, rc); return 125; }
  }
  fclose(rules);
  if (seccomp_load(ctx) != 0) { fprintf(stderr, "seccomp-exec: cannot load the filter\n"); return 125; }
  execvp(argv[2], argv + 2);
  perror("seccomp-exec: exec");
  return 127;
}
