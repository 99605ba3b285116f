<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Security;

use PHPUnit\Framework\TestCase;
use ServicePay\WooCommerce\Security\ApiKey;

final class ApiKeyTest extends TestCase {

	private const SK_TEST = 'sk_test_M7UbdLCOMak7FFke3Yz58yPsUi2knjbA';

	public function test_kind_and_environment(): void {
		$this->assertSame( 'secret', ApiKey::kind( self::SK_TEST ) );
		$this->assertSame( 'publishable', ApiKey::kind( 'pk_live_x' ) );
		$this->assertSame( 'client_secret', ApiKey::kind( 'cs_test_x' ) );
		$this->assertSame( 'unknown', ApiKey::kind( 'whsec_x' ) );
		$this->assertSame( 'test', ApiKey::environment( self::SK_TEST ) );
		$this->assertSame( 'live', ApiKey::environment( 'pk_live_abc' ) );
		$this->assertNull( ApiKey::environment( 'nonsense' ) );
	}

	public function test_shape_of_a_secret_key(): void {
		$this->assertTrue( ApiKey::is_well_formed_secret( self::SK_TEST ) );
		$this->assertFalse( ApiKey::is_well_formed_secret( substr( self::SK_TEST, 0, -1 ) ) );
		$this->assertFalse( ApiKey::is_well_formed_secret( self::SK_TEST . ' ' ) );
	}

	public function test_mask_shows_prefix_and_last_four_only(): void {
		$this->assertSame( 'sk_test_…' . substr( self::SK_TEST, -4 ), ApiKey::mask( self::SK_TEST ) );
		$this->assertStringNotContainsString( 'M7UbdLCO', ApiKey::mask( self::SK_TEST ) );
		$this->assertSame( '', ApiKey::mask( '' ) );
		// A short value reveals nothing of itself.
		$this->assertSame( 'sk_test_…', ApiKey::mask( 'sk_test_abc' ) );
	}
}
