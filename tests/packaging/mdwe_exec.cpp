// mdwe_exec PROGRAM [ARG...]: runs PROGRAM with memory that is never both writable and
// executable (the kernel's PR_SET_MDWE, kept across exec), which is what the units'
// MemoryDenyWriteExecute=yes imposes, so a test can prove the binaries live with it.
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>

namespace {
// From <linux/prctl.h> of Linux 6.3; Debian 12's headers are older.
constexpr int kSetMdwe = 65;
constexpr unsigned long kMdweRefuseExecGain = 1;
constexpr int kSkipped = 77; // ctest's SKIP_RETURN_CODE: a kernel without it cannot test this
} // namespace

int main(int argc, char *argv[])
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: mdwe_exec PROGRAM [ARG...]\n");
        return 2;
    }
    if (prctl(kSetMdwe, kMdweRefuseExecGain, 0UL, 0UL, 0UL) != 0) {
        std::perror("mdwe_exec: prctl(PR_SET_MDWE)");
        return kSkipped;
    }
    execv(argv[1], argv + 1);
    std::perror("mdwe_exec: execv");
    return 127;
}
