package contract

// GPUTopology is the GPU topology matrix a container's built-in NVIDIA discovery script read
// (`nvidia-smi topo -m`) when it chose a set of more than one GPU, and the link of that set
// (docs/gpus.md#topology-connected-sets). The launcher reports it (ContainerReport.Topology); the AM
// shows it on the GPU map (ContainerStatus.Topology) and says in an event when the set is worse than
// the node's best (docs/running.md#events).
type GPUTopology struct {
	// Link is the worst link among the pairs of the chosen GPUs, as nvidia-smi names it (NV18, PIX, SYS).
	Link string `json:"link"`
	// Best is the link of the node's best set of as many GPUs when the chosen one is worse (--topology
	// prefer took what was free); "" when the set is as good as the node's best.
	Best string `json:"best,omitempty"`
	// GPUs are the matrix's GPUs in its order.
	GPUs []GPUTopologyRow `json:"gpus"`
}

// GPUTopologyRow is one row of the matrix.
type GPUTopologyRow struct {
	Index string   `json:"index"` // the GPU's index (nvidia-smi's GPU<n>)
	NUMA  string   `json:"numa"`  // its NUMA node ("NUMA Affinity"); "-" when the matrix gives none
	Links []string `json:"links"` // its link to each GPU of GPUTopology.GPUs, in order; "X" to itself
}

// MaxTopologyGPUs bounds the GPUs of a reported topology (the script weighs sets of at most 16).
const MaxTopologyGPUs = 64
