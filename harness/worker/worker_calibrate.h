/* worker_calibrate.h - the worker mode `tilebench-worker calibrate`: the GPU's two roofline
 * ceilings measured on the GPU itself (a DRAM copy and a large cuBLASLt GEMM), for
 * `tilebench doctor --calibrate`. See worker_calibrate.c for the job, the method and the
 * records. */
#ifndef TB_WORKER_CALIBRATE_H
#define TB_WORKER_CALIBRATE_H

/* Read one job line on stdin ({"device": N} or {"device_uuid": "GPU-..."}), measure, write
 * records to out_fd, end with {"type":"done"}. Returns the worker's exit status: 0 when the
 * calibration record was sent; 2 when the job was unusable, there is no usable GPU, or a
 * measurement failed (a {"type":"fatal","error"} record says why, and no calibration record
 * is sent). */
int tb_worker_calibrate(int out_fd);

#endif
