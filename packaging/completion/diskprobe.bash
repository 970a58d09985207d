# bash completion for diskprobe(1): subcommands, options, profile names (asked of the
# diskprobe being completed, so a build tree's binary offers its own) and block devices
# (from /sys/class/block, or from the root given with --sysfs earlier on the line).
# Needs nothing from the bash-completion package.

_diskprobe_profiles() {
  local bin=$1
  command -v "$bin" >/dev/null 2>&1 || return 0
  "$bin" profiles 2>/dev/null | while read -r name _; do printf '%s\n' "$name"; done
}

_diskprobe_devices() {
  local sysfs=$1 d
  for d in "$sysfs"/class/block/*; do
    [ -e "$d" ] || [ -L "$d" ] || continue
    printf '%s\n' "${d##*/}"
  done
}

_diskprobe() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local bin=${COMP_WORDS[0]} cmd="" sub="" sysfs=/sys i w
  local commands="devices check tune profiles profile run accept curve fio compare aggregate"
  local overrides="--rw --bs --iodepth --numjobs --runtime --ramp_time --time_based --size --offset
    --direct --rwmixread --randrepeat --randseed --refill_buffers --engine --rq_affinity --pinning
    --hold_cstates --advise_idle_poll --io_size --norandommap --cpus_allowed --cpus_allowed_policy
    --sqpoll --hipri --force_async --continue_on_error --verify --do_verify --percentiles --scheduler --nomerges
    --cstate_latency_limit_us --group_reporting --sync --rate_iops --rate --ss --steadystate --ss_dur
    --steadystate_duration --ss_ramp --steadystate_ramp_time"
  # fio's switches: they stand alone, so the word after one is not its value.
  local switches="--norandommap --time_based --refill_buffers --direct --randrepeat --sqpoll --hipri
    --do_verify --group_reporting --sync"
  overrides=${overrides//$'\n'/ } switches=${switches//$'\n'/ }  # one line: matched as " $list "
  local safety="--paranoid --no-paranoid --allow-nonzero"
  local global="--sysfs --procfs --verbose --help --version"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      --sysfs) sysfs=${COMP_WORDS[i+1]:-/sys} ;;
      --sysfs=*) sysfs=${w#--sysfs=} ;;
    esac
    if [ -z "$cmd" ]; then
      case " $commands " in *" $w "*) cmd=$w ;; esac
    elif [ "$cmd" = profile ] && [ -z "$sub" ] && [ "${w#-}" = "$w" ]; then
      sub=$w
    fi
  done

  COMPREPLY=()
  case $prev in
    --profile)
      COMPREPLY=($(compgen -W "$(_diskprobe_profiles "$bin")" -- "$cur"))
      COMPREPLY+=($(compgen -f -X '!*.json' -- "$cur"))
      return ;;
    --mode) COMPREPLY=($(compgen -W "write read" -- "$cur")); return ;;
    --output-format)
      if [ "$cmd" = fio ]; then
        COMPREPLY=($(compgen -W "normal json json+" -- "$cur"))  # fio's own names
      else
        COMPREPLY=($(compgen -W "text json junit fio-json fio-json+ openmetrics" -- "$cur"))
      fi
      return ;;
    --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --report) COMPREPLY=($(compgen -f -X '!*.html' -- "$cur")); compopt -o plusdirs 2>/dev/null; return ;;
    --sysfs | --procfs | --directory) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --scratch) COMPREPLY=($(compgen -W "256M 1G 4G" -- "$cur")); return ;;
    --max-regression) COMPREPLY=($(compgen -W "1% 5% 10%" -- "$cur")); return ;;
    --rw) COMPREPLY=($(compgen -W "read write randread randwrite randrw readwrite" -- "$cur")); return ;;
    --engine) COMPREPLY=($(compgen -W "io_uring sync" -- "$cur")); return ;;
    --ioengine) COMPREPLY=($(compgen -W "io_uring libaio sync psync" -- "$cur")); return ;;
    --force_async) COMPREPLY=($(compgen -W "auto 0 1" -- "$cur")); return ;;
    --filename) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --name) return ;;  # a job name to type
    --pinning) COMPREPLY=($(compgen -W "none irq hw-queues" -- "$cur")); return ;;
    --rq_affinity | --nomerges) COMPREPLY=($(compgen -W "0 1 2" -- "$cur")); return ;;
    --verify) COMPREPLY=($(compgen -W "crc32c none" -- "$cur")); return ;;
    --ss | --steadystate)
      COMPREPLY=($(compgen -W "iops: iops_slope: bw: bw_slope: none" -- "$cur"))
      compopt -o nospace 2>/dev/null; return ;;
    --continue_on_error) COMPREPLY=($(compgen -W "none read write io verify all" -- "$cur")); return ;;
    --cpus_allowed_policy) COMPREPLY=($(compgen -W "shared split" -- "$cur")); return ;;
    --scheduler) COMPREPLY=($(compgen -W "none mq-deadline kyber bfq" -- "$cur")); return ;;
    --volume)
      COMPREPLY=($(compgen -W "essd-pl0: essd-pl1: essd-pl2: essd-pl3: essd-autopl: essd-plx: ebs-io1:
        ebs-io2: ebs-gp3: custom:iops=" -- "$cur"))
      compopt -o nospace 2>/dev/null; return ;;
    --tolerance) COMPREPLY=($(compgen -W "90% 95% 99%" -- "$cur")); return ;;
    --max-time) COMPREPLY=($(compgen -W "300 600 1800" -- "$cur")); return ;;
    --max-iodepth) COMPREPLY=($(compgen -W "32 64 128 256" -- "$cur")); return ;;
    --step-time) COMPREPLY=($(compgen -W "10s 20s 60s" -- "$cur")); return ;;
    --rate-steps) COMPREPLY=($(compgen -W "10,25,50,75,90,95,100%" -- "$cur")); return ;;
    --max-iops | --past-knee) return ;;  # a number to type
    --expect) return ;;  # an expression to type, like iops>=38000
  esac
  case " $switches " in
    *" $prev "*) ;;  # stands alone: complete afresh
    *) case " $overrides " in *" $prev "*) return ;; esac ;;  # a value to type
  esac

  if [ -z "$cmd" ]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "$global" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
    return
  fi

  if [[ $cur == -* ]]; then
    local opts=""
    case $cmd in
      devices) opts="--json $safety" ;;
      profiles) opts="--json" ;;
      check) opts="--mode --json $safety" ;;
      tune) opts="--profile --json --apply --restore --strict $overrides" ;;
      profile) opts="--json $overrides" ;;
      run)
        opts="--profile --scratch --directory --keep-files --output-format --output --report --no-tune
          --strict --expect --volume --tolerance --name --filename --ioengine $safety $overrides" ;;
      accept)
        opts="--volume --tolerance --max-time --output-format --output --report --no-tune --strict $safety" ;;
      curve)
        opts="--profile --max-iodepth --step-time --rate-steps --max-iops --past-knee --output-format --report --no-tune
          $safety $overrides" ;;
      fio)
        opts="--name --filename --directory --rw --bs --iodepth --ioengine --direct --numjobs --runtime --time_based
          --size --offset --output --output-format --parse-only --section --readonly" ;;
      compare) opts="--max-regression --json" ;;
      aggregate) opts="--json" ;;
    esac
    COMPREPLY=($(compgen -W "$opts $global" -- "$cur"))
    return
  fi

  case $cmd in
    check | tune | run | accept | curve) COMPREPLY=($(compgen -W "$(_diskprobe_devices "$sysfs")" -- "$cur")) ;;
    profile)
      if [ -z "$sub" ]; then
        COMPREPLY=($(compgen -W "show" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$(_diskprobe_profiles "$bin")" -- "$cur"))
      fi ;;
    fio) COMPREPLY=($(compgen -f -- "$cur")) ;;  # job files
    compare | aggregate)
      COMPREPLY=($(compgen -f -X '!*.json' -- "$cur"))
      compopt -o plusdirs 2>/dev/null ;;
  esac
}
complete -F _diskprobe diskprobe
