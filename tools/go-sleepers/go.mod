module photon/tools/go-sleepers

go 1.19
