package contract

// Rendezvous is what each rank of a gang learns before its worker starts (taskexecutor.gang): its
// rank and the address of rank 0, as torchrun-style launchers expect them. The AM publishes it at
// GET /api/v1/containers/<id>/rendezvous once every rank of the round has reported; the launcher puts
// it in the worker's environment (the Env* names below and PyTorch's RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and in RendezvousFileName.
type Rendezvous struct {
	Round          int    `json:"round"`          // the gang round, from 0; a new round after a restart
	Rank           int    `json:"rank"`           // 0..WorldSize-1, stable for the round
	WorldSize      int    `json:"worldSize"`      // the number of ranks
	LocalRank      int    `json:"localRank"`      // the rank among the round's ranks on the same node
	LocalWorldSize int    `json:"localWorldSize"` // how many ranks run on this node
	Node           string `json:"node"`           // this rank's node
	// MasterAddr and MasterPort: rank 0's host and a port that was free on its node, chosen there;
	// served only over HTTPS with the application secret (absent for anonymous readers: anyone who
	// knew them before rank 0 binds the port could bind it first).
	MasterAddr string `json:"masterAddr,omitempty"`
	MasterPort int    `json:"masterPort,omitempty"`
}

// RendezvousPath is appended to EnvReportURL and the container id: GET <EnvReportURL><id>/rendezvous
// with "Authorization: Bearer <secret>" answers 200 with the Rendezvous (without the secret: without
// MasterAddr and MasterPort), 202 while ranks are missing, 410 when the container is no longer
// part of the current round (the gang restarted).
const RendezvousPath = "/rendezvous"

// Gang environment.
const (
	// EnvGang is set to 1 in the TaskExecutors of a gang: the launcher reports a free port and waits
	// for the rendezvous before it starts the worker.
	EnvGang = "YARN_AM_GANG"
	// RendezvousFileName is the rendezvous as JSON in the container's working directory;
	// EnvRendezvousFile holds its absolute path.
	RendezvousFileName = "rendezvous.json"
	EnvRendezvousFile  = "YARN_AM_RENDEZVOUS_FILE"
	EnvRank            = "YARN_AM_RANK"
	EnvWorldSize       = "YARN_AM_WORLD_SIZE"
	EnvLocalRank       = "YARN_AM_LOCAL_RANK"
	EnvRound           = "YARN_AM_ROUND"
	EnvMasterAddr      = "YARN_AM_MASTER_ADDR"
	EnvMasterPort      = "YARN_AM_MASTER_PORT"
)
