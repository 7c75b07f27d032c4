/* Infrastructure or program, on a corpus of log tails written in the style
 * of real NCCL, CUDA, Xid, OOM-killer, Pyxis/Enroot and Python failures. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/track/classify.h"

static struct patterns *shipped(void)
{
	const char *share = getenv("TAOTOP_SHARE");
	char path[4096];
	struct patterns *p = NULL;
	char *err = NULL;
	snprintf(path, sizeof(path), "%s/templates/failure-patterns.conf", share ? share : ".");
	cr_assert_eq(patterns_load(path, &p, &err), 0, "%s", err);
	return p;
}

#define INFRA FAILURE_INFRA
#define PROG FAILURE_PROGRAM

static const struct sample {
	const char *native, *exit_code, *out, *err;
	enum failure_kind want;
	const char *reason;
} corpus[] = {
	/* ---- infrastructure ---- */
	{ "FAILED", "1:0", "epoch 3/80", "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=18213, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600047 milliseconds before timing out.", INFRA, "nccl-timeout" },
	{ "FAILED", "1:0", "", "node02:41234:41301 [1] NCCL WARN NET/IB : Got completion from peer 10.0.3.12<45678> with error 12, opcode 0, len 0, vendor err 129 (Recv)", INFRA, "nccl-transport" },
	{ "FAILED", "1:0", "", "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\ntorch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.", INFRA, "nccl-unhandled" },
	{ "FAILED", "1:0", "", "RuntimeError: NCCL communicator was aborted on rank 1. Original reason for failure was: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.", INFRA, "nccl-unhandled" },
	{ "FAILED", "1:0", "", "node01:2201:2201 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\nnode01:2201:2230 [0] NCCL WARN Call to ibv_reg_mr failed: Timeout waiting for NCCL operation", INFRA, "nccl-timeout" },
	{ "FAILED", "1:0", "", "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.", INFRA, "cuda-init" },
	{ "FAILED", "1:0", "", "Traceback (most recent call last):\n  File \"/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py\", line 298, in _lazy_init\nRuntimeError: No CUDA GPUs are available", INFRA, "cuda-init" },
	{ "FAILED", "1:0", "", "cudaErrorNoDevice: no CUDA-capable device is detected", INFRA, "cuda-init" },
	{ "FAILED", "1:0", "", "RuntimeError: CUDA error: uncorrectable ECC error encountered\nCUDA kernel errors might be asynchronously reported at some other API call", INFRA, "ecc" },
	{ "FAILED", "255:0", "", "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU", INFRA, "gpu-lost" },
	{ "FAILED", "1:0", "[Mon Nov  3 10:11:12 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=12345, name=python, GPU has fallen off the bus.", "", INFRA, "gpu-lost" },
	{ "FAILED", "1:0", "", "NVRM: Xid (PCI:0000:86:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer", INFRA, "xid" },
	{ "FAILED", "1:0", "", "mlx5_core 0000:86:00.0 ib0: Link is down", INFRA, "ib-down" },
	{ "FAILED", "1:0", "", "node04:3311:3340 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : ibv_poll_cq failed with error transport retry counter exceeded", INFRA, "nccl-transport" },
	{ "FAILED", "1:0", "", "srun: error: Node failure on node07\nsrun: Job step aborted: Waiting up to 32 seconds for job step to finish.", INFRA, "node-fail" },
	{ "FAILED", "0:0", "", "slurmstepd: error: *** JOB 1234 ON node03 CANCELLED AT 2026-11-29T10:12:13 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***", INFRA, "node-fail" },
	/* SLURM's words when a node's prolog fails (slurmstepd; the job's
	 * reason "launch failed requeued held"). */
	{ "FAILED", "1:0", "", "slurmstepd: error: prolog failed: rc:230 output:/etc/slurm/prolog.d/50-gpu-check: GPU health check failed", INFRA, "prolog" },
	{ "FAILED", "1:0", "", "srun: error: Task launch for StepId=4242.0 failed on node node05: launch failed requeued held", INFRA, "prolog" },
	/* A C assertion (glibc's words) in the program's own code, no .cu: */
	{ "FAILED", "134:0", "", "python: src/loader.c:88: load_batch: Assertion `n > 0' failed.\nAborted (core dumped)", PROG, "assertion" },
	{ "FAILED", "1:0", "", "AssertionError: num_epochs must be positive", PROG, "assertion" },
	{ "FAILED", "1:0", "", "pyxis: importing docker image: nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt\nslurmstepd: error: pyxis: failed to import docker image\nslurmstepd: error: pyxis: printing enroot log file:", INFRA, "pyxis-import" },
	{ "FAILED", "1:0", "", "[ERROR] Could not process JSON input\nslurmstepd: error: pyxis: failed to import docker image", INFRA, "pyxis-import" },
	{ "FAILED", "1:0", "", "enroot-nsenter: failed to create user namespace: Operation not permitted", INFRA, "pyxis-import" },
	{ "NODE_FAIL", "0:0", "", "", INFRA, "NODE_FAIL" },
	/* taotop's NCCL probe, the job's first step, hung with every rung:
	 * the cluster's, not the program's (no training ran). */
	{ "FAILED", "1:0", "taotop: the NCCL probe on 2x2, rung 1: none (up to 120s)\ntaotop: the NCCL probe hung with none (ended by the collective's own timeout): its output is in /l/job/nccl-probe-7-1.out", "taotop: the NCCL probe hung with every rung of the ladder on 2x2 (tried: none; NCCL_P2P_DISABLE=1): the training did not start; ask the cluster's admins which NCCL settings work there and set them as nccl_env for this cluster in taotop's config.yaml", INFRA, "nccl-probe" },
	/* The scheduler's word decides; a node's line is its evidence. */
	{ "NODE_FAIL", "0:0", "", "Nov  3 10:11:12 node02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1433, name=python, GPU has fallen off the bus.", INFRA, "NODE_FAIL" },
	/* tao-core's RETRIABLE_ERROR_PATTERNS, one line each in the shape the
	 * program prints it. */
	{ "FAILED", "1:0", "", "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx", INFRA, "driver-old" },
	{ "FAILED", "1:0", "", "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version", INFRA, "driver-old" },
	{ "FAILED", "1:0", "", "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized (CUDA initialization: error)", INFRA, "cuda-init" },
	{ "FAILED", "1:0", "", "cuInit(0) failed with error CUDA_ERROR_NO_DEVICE", INFRA, "cuda-init" },
	{ "FAILED", "1:0", "torch.cuda.is_available(): False", "", INFRA, "cuda-init" },
	{ "FAILED", "1:0", "", "ERROR: GPU 3 not found in the allocation", INFRA, "gpu-missing" },
	{ "FAILED", "1:0", "", "[Mon Nov  3 10:11:12 2026] NVRM: GPU at PCI:0000:3b:00: GPU has over temperature event, thermal shutdown", INFRA, "gpu-temp" },
	{ "FAILED", "1:0", "", "ibv_poll_cq: InfiniBand completion error on mlx5_0 (IBV_WC_RETRY_EXC_ERR)", INFRA, "ib-error" },
	{ "FAILED", "1:0", "", "RDMA error: the completion queue reported IBV_WC_REM_ACCESS_ERR", INFRA, "ib-error" },
	{ "FAILED", "1:0", "", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, invalid usage, NCCL version 2.19.3", INFRA, "nccl-error" },
	{ "FAILED", "1:0", "", "RuntimeError: CUDA error: unknown error\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", INFRA, "cuda-runtime" },
	{ "FAILED", "1:0", "", "Nov  3 10:11:12 node02 kernel: NVRM: Xid (PCI:0000:86:00): 63, pid=1433, name=python, Row Remapper Error: (0x00000005f01ab3c0) - All reserved rows for bank are remapped", INFRA, "xid" },
	/* A traceback after an Xid is the node's. */
	{ "FAILED", "1:0", "", "Nov  3 10:11:12 node02 kernel: NVRM: Xid (PCI:0000:86:00): 48, pid=1433, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\nTraceback (most recent call last):\n  File \"train.py\", line 88, in <module>\nRuntimeError: CUDA error: uncorrectable ECC error encountered", INFRA, "xid" },
	{ "BOOT_FAIL", "0:0", "", "", INFRA, "BOOT_FAIL" },
	/* ---- the program's own ---- */
	/* Every out of memory (the bank), the host's included. */
	{ "OUT_OF_MEMORY", "0:125", "", "slurmstepd: error: Detected 1 oom_kill event in StepId=4412.batch. Some of the step tasks have been OOM Killed.", PROG, "OUT_OF_MEMORY" },
	{ "FAILED", "0:125", "", "slurmstepd: error: Detected 1 oom_kill event in StepId=4412.0. Some of the step tasks have been OOM Killed.\nsrun: error: node02: task 0: Out Of Memory", PROG, "host-oom" },
	{ "FAILED", "137:0", "kernel: Out of memory: Killed process 88123 (python3) total-vm:412388416kB, anon-rss:251658240kB", "", PROG, "host-oom" },
	{ "DEADLINE", "0:0", "", "", PROG, "DEADLINE" },
	{ "TIMEOUT", "0:0", "", "slurmstepd: error: *** JOB 77 ON node01 CANCELLED AT 2026-11-29T10:12:13 DUE TO TIME LIMIT ***", PROG, "TIMEOUT" },
	/* A device-side assert is the root cause, though NCCL errors follow. */
	{ "FAILED", "1:0", "", "../aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\nRuntimeError: CUDA error: device-side assert triggered\n[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Process group watchdog thread terminated with exception: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\nncclUnhandledCudaError: Call to CUDA function failed.", PROG, "device-assert" },
	{ "FAILED", "1:0", "", "RuntimeError: CUDA error: an illegal memory access was encountered\nnode01:88:90 [0] NCCL WARN Cuda failure 'an illegal memory access was encountered'\ntorch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error", PROG, "illegal-memory" },
	{ "FAILED", "1:0", "", "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`", PROG, "cublas-cudnn" },
	{ "FAILED", "1:0", "", "RuntimeError: cuDNN error: CUDNN_STATUS_BAD_PARAM", PROG, "cublas-cudnn" },
	/* Debug lines and echoes are no evidence (NCCL_DEBUG=INFO). */
	{ "FAILED", "1:0", "node01:2201:2201 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22\nnode01:2201:2201 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0", "Traceback (most recent call last):\nKeyError: 'labels'", PROG, "python-traceback" },
	{ "FAILED", "1:0", "NCCL_IB_TIMEOUT=22\nexport NCCL_DEBUG=INFO\nNCCL_ASYNC_ERROR_HANDLING=1", "Traceback (most recent call last):\nValueError: bad spec", PROG, "python-traceback" },
	{ "FAILED", "1:0", "", "[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function operator())\nTraceback (most recent call last):\nValueError: bad spec", PROG, "python-traceback" },
	{ "FAILED", "1:0", "    ECC Errors\n        Volatile\n            DRAM Correctable : 0", "Traceback (most recent call last):\nValueError: bad spec", PROG, "python-traceback" },
	{ "FAILED", "1:0", "", "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: '/specs/gpu/config.yaml' not found", PROG, "python-traceback" },
	{ "FAILED", "1:0", "", "Traceback (most recent call last):\n  File \"/opt/nvidia/tools/train.py\", line 41, in main\n    labels = cfg['dataset']['labels']\nKeyError: 'labels'", PROG, "python-traceback" },
	{ "FAILED", "1:0", "", "Traceback (most recent call last):\n  File \"model.py\", line 12, in build\nAssertionError: batch size 63 must be divisible by the number of GPUs (4)", PROG, "python-traceback" },
	{ "FAILED", "1:0", "", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; 75.02 GiB already allocated)", PROG, "cuda-oom" },
	{ "FAILED", "1:0", "", "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: '/lustre/datasets/cifar10/train/labels.txt'", PROG, "python-traceback" },
	{ "FAILED", "1:0", "", "hydra.errors.ConfigCompositionException: Could not override 'train.num_epochs'.", PROG, "tao-error" },
	{ "FAILED", "1:0", "", "omegaconf.errors.ValidationError: Value 'eighty' of type 'str' could not be converted to Integer", PROG, "tao-error" },
	{ "FAILED", "3:0", "", "srun: error: node01: task 0: Exited with exit code 3", PROG, "exit-code" },
	{ "FAILED", "1:0", "epoch 12/80 loss=nan", "Traceback (most recent call last):\nValueError: loss became NaN at epoch 12", PROG, "python-traceback" },
	{ "FAILED", "1:0", "", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'nvidia_tao_pytorch.cv.classification'", PROG, "python-traceback" },
	{ "FAILED", "139:0", "", "Segmentation fault (core dumped)", PROG, "FAILED, exit 139:0" },
	{ "FAILED", "3:0", "", "", PROG, "FAILED, exit 3:0" },
	{ "FAILED", "1:0", "[TAO Toolkit] ERROR: the spec /specs/spec.yaml has no key 'dataset.train_data_sources'", "", PROG, "tao-error" },
	/* NCCL chatter is no failure: the traceback decides. */
	{ "FAILED", "1:0", "node01:2201:2201 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\nnode01:2201:2201 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)", "Traceback (most recent call last):\nRuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", PROG, "python-traceback" },
};

Test(classify, the_corpus)
{
	struct patterns *p = shipped();
	size_t n = sizeof(corpus) / sizeof(corpus[0]), infra = 0;

	cr_assert_geq(n, 50);
	for (size_t i = 0; i < n; i++) {
		struct verdict v;
		classify_failure(p, corpus[i].native, corpus[i].exit_code, corpus[i].out, corpus[i].err, &v);
		cr_expect_eq(v.kind, corpus[i].want, "sample %zu: %s (%s: %s)", i,
		    v.kind == FAILURE_INFRA ? "infra" : "program", v.reason, v.evidence);
		cr_expect_str_eq(v.reason, corpus[i].reason, "sample %zu", i);
		/* Only the cluster's setup (the probe's every rung hung) is
		 * the infrastructure's and still never retried. */
		cr_expect_eq(v.no_retry, strcmp(corpus[i].reason, "nccl-probe") == 0,
		    "sample %zu: no_retry %d", i, v.no_retry);
		infra += corpus[i].want == FAILURE_INFRA;
	}
	cr_expect(infra >= 10 && n - infra >= 10, "both kinds are well represented");
	patterns_free(p);
}

Test(classify, a_bad_pattern_names_its_line)
{
	struct patterns *p = NULL;
	char *err = NULL;
	cr_expect_eq(patterns_parse("site.conf", "# ok\ninfra a (unclosed\n", &p, &err), -1);
	cr_expect(err && strncmp(err, "site.conf:2: pattern a:", 23) == 0, "%s", err);
	free(err), err = NULL;
	cr_expect_eq(patterns_parse("site.conf", "fatal x y\n", &p, &err), -1);
	cr_expect(err && strstr(err, "site.conf:1: write KIND NAME REGEX") != NULL, "%s", err);
	cr_expect(err && strstr(err, "ignore, fault, node, infra, setup or program") != NULL, "%s",
	    err);
	free(err), err = NULL;
	/* A site's own setup rule: the cluster's, never retried. */
	{
		struct patterns *q = NULL;
		struct verdict w;
		cr_assert_eq(patterns_parse("site.conf", "setup site-mount lustre not mounted\n", &q,
		    &err), 0, "%s", err);
		classify_failure(q, "FAILED", "1:0", "", "error: lustre not mounted on node03", &w);
		cr_expect_eq(w.kind, FAILURE_INFRA);
		cr_expect(w.no_retry, "a setup rule is never retried");
		cr_expect_str_eq(w.reason, "site-mount");
		patterns_free(q);
	}
	cr_assert_eq(patterns_parse("site.conf", "infra site-fs lustre: .*evicted\n", &p, &err), 0);
	struct verdict v;
	classify_failure(p, "FAILED", "1:0", "", "LustreError: lustre: client 0x1 evicted by server", &v);
	cr_expect_eq(v.kind, FAILURE_INFRA, "a site's own pattern counts");
	cr_expect_str_eq(v.reason, "site-fs");
	patterns_free(p);
}

/* The verdict names the line that decided it, and the log it is in. */
Test(classify, the_verdict_names_its_line_and_log)
{
	struct patterns *p = shipped();
	struct verdict v;

	classify_failure(p, "FAILED", "1:0", "epoch 3/80\nNov  3 10:11:12 node02 kernel: NVRM: Xid "
	    "(PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.",
	    "Traceback (most recent call last):\nRuntimeError: boom", &v);
	cr_expect_eq(v.kind, FAILURE_INFRA);
	cr_expect_str_eq(v.reason, "gpu-lost");
	cr_expect_str_eq(v.source, "main.out");
	cr_expect_str_eq(v.evidence, "Nov  3 10:11:12 node02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, "
	    "pid=1, name=python, GPU has fallen off the bus.");
	cr_expect(v.node_tied, "an Xid is the node's");
	classify_failure(p, "FAILED", "1:0", "", "node01:1:2 [0] NCCL WARN NET/IB : Got completion "
	    "from peer 10.0.0.2<4> with error 12", &v);
	cr_expect_eq(v.kind, FAILURE_INFRA);
	cr_expect_not(v.node_tied, "a transport error names no bad node of its own");
	patterns_free(p);
}

/* The node to exclude: the one the line names among the job's nodes, or
 * the only node; none on a guess. */
Test(classify, the_node_to_exclude)
{
	struct verdict v = { .kind = FAILURE_INFRA, .node_tied = 1 };
	const char *two[] = { "node01", "node02" }, *one[] = { "node01" }, *ten[] = { "node1", "node10" };

	snprintf(v.evidence, sizeof(v.evidence), "Nov  3 10:11:12 node02 kernel: NVRM: Xid (PCI:0000:3b:00): 79");
	cr_expect_str_eq(classify_verdict_node(&v, two, 2), "node02");
	cr_expect_str_eq(classify_verdict_node(&v, one, 1), "node01", "the only node it ran on");
	snprintf(v.evidence, sizeof(v.evidence), "NVRM: Xid (PCI:0000:3b:00): 79");
	cr_expect_null(classify_verdict_node(&v, two, 2), "two nodes, the line names neither");
	snprintf(v.evidence, sizeof(v.evidence), "srun: error: Node failure on node10");
	cr_expect_str_eq(classify_verdict_node(&v, ten, 2), "node10", "a whole word: node1 is not node10");
	v.node_tied = 0;
	cr_expect_null(classify_verdict_node(&v, one, 1), "not a node's failure");
	v.node_tied = 1, v.kind = FAILURE_PROGRAM;
	cr_expect_null(classify_verdict_node(&v, one, 1), "the program's");
}

/* A site's own ignore rule hides its lines from every other rule. */
Test(classify, an_ignore_rule_hides_a_line)
{
	struct patterns *p = NULL;
	char *err = NULL;
	struct verdict v;

	cr_assert_eq(patterns_parse("site.conf", "ignore echo ^echo:\ninfra net net down\n", &p, &err), 0,
	    "%s", err);
	classify_failure(p, "FAILED", "1:0", "echo: net down", "", &v);
	cr_expect_eq(v.kind, FAILURE_PROGRAM, "%s", v.reason);
	classify_failure(p, "FAILED", "1:0", "eth0: net down", "", &v);
	cr_expect_eq(v.kind, FAILURE_INFRA);
	patterns_free(p);
}
