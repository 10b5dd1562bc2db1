import { diskFullOf } from './disk-full.js';
import { damagedLine, damageOf } from './warehouse-damage.js';
import { DiskFullError, WarehouseDamagedError } from './warehouse-errors.js';

/**
 * The kinded error a raw error of the machine or the warehouse stands for — a damaged block, a full disk — or
 * undefined. Such errors come from the engines and the file system wherever a read or a write meets them, so they
 * are told by what they say, once, where a command ends.
 */
export function warehouseFaultOf(error: unknown): DiskFullError | WarehouseDamagedError | undefined {
  const damage = damageOf(error);
  if (damage !== undefined) return new WarehouseDamagedError(damagedLine(damage), { cause: error });
  const full = diskFullOf(error);
  if (full !== undefined) return error instanceof DiskFullError ? error : new DiskFullError(full, { cause: error });
  return undefined;
}
