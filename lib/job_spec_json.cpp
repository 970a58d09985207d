#include <nlohmann/json.hpp>

#include "diskprobe/core/job_spec.h"

namespace diskprobe {

using nlohmann::json;

json to_json(const JobSpec& s) {
  json host = {{"pinning", std::string(to_string(s.host.pinning))},
               {"hold_cstates", s.host.hold_cstates},
               {"advise_idle_poll", s.host.advise_idle_poll}};
  host["rq_affinity"] = s.host.rq_affinity ? json(*s.host.rq_affinity) : json(nullptr);
  return {{"name", s.name},
          {"description", s.description},
          {"source", s.source},
          {"rw", std::string(to_string(s.rw))},
          {"rwmixread_percent", s.rwmixread},
          {"bs_bytes", s.bs},
          {"iodepth", s.iodepth},
          {"numjobs", s.numjobs},
          {"runtime_s", s.runtime_s},
          {"time_based", s.time_based},
          {"ramp_time_s", s.ramp_time_s},
          {"offset_bytes", s.offset},
          {"size_bytes", s.size},
          {"direct", s.direct},
          {"randrepeat", s.randrepeat},
          {"randseed", s.randseed},
          {"norandommap", s.norandommap},
          {"refill_buffers", s.refill_buffers},
          {"engine", std::string(to_string(s.engine))},
          {"directory", s.directory},
          {"host", host},
          {"expect", s.expect},
          {"notes", s.notes}};
}

}  // namespace diskprobe
